// Where a partition's bytes go. Sinks are owned and called by exactly one partition owner, so
// they need no locks; they receive large blocks, never single lines.
#pragma once

#include <string>
#include <string_view>

#include "checkpoint/checkpoint.h"
#include "util/status.h"

namespace keyshard {

class Sink {
 public:
  virtual ~Sink() = default;
  /// Appends a block of whole lines.
  virtual Status write(std::string_view block) = 0;
  /// Flushes and closes; no write may follow.
  virtual Status finish() = 0;
  /// The path (or "<stdout>") used in messages.
  virtual const std::string& name() const = 0;
  /// Makes what was written durable (fsync); a no-op for pipes and terminals.
  virtual Status sync() { return {}; }
  /// Makes everything written to the filesystem holding this file durable (syncfs): one call
  /// instead of an fsync per file when an owner holds many partitions.
  virtual Status sync_filesystem() { return sync(); }
  /// The file's size and content hash so far (a file sink opened for checkpoints; else zero).
  virtual OutputState state() const { return {}; }
};

}  // namespace keyshard
