// Streaming zstd decompression of one input. Concatenated frames are one stream, as with
// `zstd -dc`. An input that ends inside a frame is an error, so a truncated file is never
// mistaken for a short one.
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "input/input_source.h"

namespace keyshard {
namespace {

// The most a read() decodes: a zstd block's largest size. A call to the decoder that fails
// returns nothing of what it decoded before the failure, so the lines before a damaged block
// are handled, but for those of this much output.
constexpr size_t kMostPerCall = 128u << 10;

// Why a zstd stream cannot be read: valid frames that need more than keyshard's decoder takes
// are not called corrupt.
std::string decoding_problem(size_t error) {
  switch (ZSTD_getErrorCode(error)) {
    case ZSTD_error_frameParameter_windowTooLarge:
      return "zstd input written with a window larger than 128 MiB (zstd --long): decompress it "
             "first, e.g. zstd -dc --long=31 FILE | keyshard ...";
    case ZSTD_error_dictionary_wrong:
      return "zstd input that names a dictionary (zstd -D), or a damaged frame header: if it "
             "was compressed with one, decompress it first, e.g. zstd -dc -D DICT FILE | "
             "keyshard ...";
    default:
      return std::string("corrupt zstd input: ") + ZSTD_getErrorName(error);
  }
}

class ZstdSource final : public InputSource {
 public:
  ZstdSource(std::string name, FileDescriptor fd, SniffedPrefix prefix)
      : InputSource(std::move(name)),
        fd_(std::move(fd)),
        stream_(ZSTD_createDStream()),
        compressed_(std::max(ZSTD_DStreamInSize(), prefix.size)) {
    std::memcpy(compressed_.data(), prefix.bytes.data(), prefix.size);
    input_ = ZSTD_inBuffer{compressed_.data(), prefix.size, 0};
    skippable_start_ = prefix.size >= 4 && static_cast<unsigned char>(prefix.bytes[0]) != 0x28;
  }
  ~ZstdSource() override { ZSTD_freeDStream(stream_); }

  Status read(char* buffer, size_t size, size_t& got) override {
    got = 0;
    if (stream_ == nullptr) return Status::error("cannot create a zstd decompression context", name());
    // (At most a block's worth a call: a call that fails returns none of what it decoded.)
    ZSTD_outBuffer output{buffer, std::min(size, kMostPerCall), 0};
    size_t produced_before = 0;  // of output.pos, counted into produced_ already
    while (output.pos == 0) {
      if (input_.pos == input_.size && !at_end_) {
        const long count = read_input(fd_.get(), compressed_.data(), compressed_.size());
        if (count < 0) return Status::error("read failed: " + errno_text(errno), name());
        if (count == 0) {
          at_end_ = true;
        } else {
          input_ = ZSTD_inBuffer{compressed_.data(), static_cast<size_t>(count), 0};
        }
      }
      const bool no_input = input_.pos == input_.size;  // only once the file is at its end
      if (no_input && !inside_frame_) return {};         // a clean end between frames
      const size_t hint = ZSTD_decompressStream(stream_, &output, &input_);
      if (ZSTD_isError(hint)) {
        const bool no_frame = ZSTD_getErrorCode(hint) == ZSTD_error_prefix_unknown;
        // (Its lines before were read unchecked; none when it fails at its header.)
        corrupt_frame_start = frame_start_;
        if (no_frame && frame_ended_ && taken_for(no_frame).empty()) {
          // (Most often plain text appended to a compressed file: cat a.zst b.ndjson > x.zst.)
          return Status::error("corrupt zstd input: what follows a complete zstd frame is not "
                               "another frame (was something appended to the compressed file?)",
                               name());
        }
        return Status::error(decoding_problem(hint) + taken_for(no_frame), name());
      }
      produced_ += output.pos - produced_before;
      produced_before = output.pos;
      // 0 means a frame just ended and is fully flushed; anything else means it goes on.
      inside_frame_ = hint != 0;
      if (hint == 0) {
        frame_ended_ = true;
        frame_start_ = produced_;  // (the next frame's, if one follows)
      }
      if (no_input && output.pos == 0) {
        if (inside_frame_ && may_grow) {
          incomplete_frame = true;
          return {};
        }
        if (inside_frame_) {
          return Status::error(
              "truncated zstd input: the data ends inside a frame" + taken_for(false), name());
        }
        return {};
      }
    }
    got = output.pos;
    decoded_any_ = true;
    output_full_ = output.pos == output.size;  // more may be waiting inside the decoder
    return {};
  }

  bool compressed() const override { return true; }

  bool ready(int timeout_ms) const override {
    return !streaming() || at_end_ || input_.pos < input_.size || output_full_ ||
           fd_ready(fd_.get(), timeout_ms);
  }

 private:
  // An input that starts like a skippable frame (as pzstd's do) may be no zstd at all: text
  // whose first bytes happen to match. When it fails before a byte of it is decoded, inside
  // that first frame or where a frame should follow it (`no_frame`), say why it was read as
  // zstd. (A zstd file cut short after its skippable frame gets no such note.)
  std::string taken_for(bool no_frame) const {
    return skippable_start_ && !decoded_any_ && (!frame_ended_ || no_frame)
               ? " (it was read as zstd because its first four bytes are those of a zstd "
                 "skippable frame, 50-5F 2A 4D 18 in hex)"
               : "";
  }

  FileDescriptor fd_;
  ZSTD_DStream* stream_;
  std::vector<char> compressed_;
  ZSTD_inBuffer input_{};
  bool at_end_ = false;
  bool output_full_ = false;
  bool inside_frame_ = true;
  bool skippable_start_ = false;  // the input's first four bytes: a skippable frame's magic
  bool decoded_any_ = false;
  bool frame_ended_ = false;  // a frame (the skippable one, first) has ended
  uint64_t produced_ = 0;     // decompressed bytes returned so far
  uint64_t frame_start_ = 0;  // where the current frame's content starts, in those bytes
};

}  // namespace

std::unique_ptr<InputSource> make_zstd_source(std::string name, FileDescriptor fd,
                                              SniffedPrefix prefix) {
  return std::make_unique<ZstdSource>(std::move(name), std::move(fd), std::move(prefix));
}

}  // namespace keyshard
