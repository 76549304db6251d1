#include "sinks/zstd_sink.h"

namespace keyshard {

ZstdContext::ZstdContext(int level) : context_(ZSTD_createCCtx()), level_(level) {
  if (context_) ZSTD_CCtx_setParameter(context_, ZSTD_c_compressionLevel, level_);
}

ZstdContext::~ZstdContext() { ZSTD_freeCCtx(context_); }

Status ZstdContext::compress(std::string_view block, std::string& out, const std::string& name) {
  if (!context_) return Status::error("cannot create a zstd compression context", name);
  out.resize(ZSTD_compressBound(block.size()));
  const size_t size = ZSTD_compress2(context_, out.data(), out.size(), block.data(), block.size());
  if (ZSTD_isError(size)) {
    return Status::error(std::string("zstd compression failed: ") + ZSTD_getErrorName(size), name);
  }
  out.resize(size);
  return {};
}

namespace {

class ZstdSink final : public Sink {
 public:
  ZstdSink(std::unique_ptr<Sink> inner, ZstdContext* context)
      : inner_(std::move(inner)),
        context_(context),
        has_frame_(inner_->file_size().value_or(0) > 0) {}

  Status write(std::string_view block) override {
    if (block.empty()) return {};
    if (Status status = context_->compress(block, frame_, inner_->name()); !status) return status;
    has_frame_ = true;
    return inner_->write(frame_);
  }

  Status finish() override {
    if (!has_frame_) {
      // An output that stayed empty: one empty frame makes it a valid zstd stream, which
      // `zstd -d` reads as nothing, where it refuses a 0-byte file. (Only at the end: every
      // checkpoint before records 0 bytes, which a file that a crash left missing or empty,
      // never synced, still matches.)
      if (Status status = context_->compress({}, frame_, inner_->name()); !status) return status;
      has_frame_ = true;
      if (Status status = inner_->write(frame_); !status) return status;
    }
    return inner_->finish();
  }
  const std::string& name() const override { return inner_->name(); }
  Status settle() override { return inner_->settle(); }
  Status sync() override { return inner_->sync(); }
  OutputState state() const override { return inner_->state(); }
  Status cut_back() override { return inner_->cut_back(); }
  Status check_in_place() const override { return inner_->check_in_place(); }

 private:
  std::unique_ptr<Sink> inner_;
  ZstdContext* context_;
  bool has_frame_;  // whether the output holds a frame (a resumed file may have some already)
  std::string frame_;
};

}  // namespace

std::unique_ptr<Sink> make_zstd_sink(std::unique_ptr<Sink> inner, ZstdContext* context) {
  return std::make_unique<ZstdSink>(std::move(inner), context);
}

}  // namespace keyshard
