// A sink that compresses with zstd before writing to another sink. Each block becomes one
// complete zstd frame: a multi-frame file is an ordinary zstd stream (`zstd -d` reads it whole),
// every frame boundary is a valid place to cut the file, and one compression context per owner
// thread serves all its partitions, so memory does not grow with -n.
#pragma once

#include <zstd.h>

#include <memory>
#include <string>

#include "sinks/sink.h"

namespace keyshard {

/// A compression context shared by the sinks of one owner thread (never across threads).
class ZstdContext {
 public:
  explicit ZstdContext(int level);
  ~ZstdContext();
  ZstdContext(const ZstdContext&) = delete;
  ZstdContext& operator=(const ZstdContext&) = delete;

  /// Compresses `block` as one frame into `out` (replacing its contents).
  Status compress(std::string_view block, std::string& out, const std::string& name);

 private:
  ZSTD_CCtx* context_;
  int level_;
};

/// Wraps `inner`: every write() is compressed into one frame by `context`, and finish() writes
/// an empty frame to an output that holds none, so that every output is a valid zstd stream.
std::unique_ptr<Sink> make_zstd_sink(std::unique_ptr<Sink> inner, ZstdContext* context);

}  // namespace keyshard
