// Where a partition's bytes go. Sinks are owned and called by exactly one partition owner, so
// they need no locks; they receive large blocks, never single lines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "checkpoint/checkpoint.h"
#include "util/status.h"

namespace keyshard {

class Sink {
 public:
  virtual ~Sink() = default;
  /// Appends a block of bytes: whole lines, except that a block written to a file_size() sink
  /// may end part way through a line, whose rest comes in the next block.
  virtual Status write(std::string_view block) = 0;
  /// As write(), except that the sink may keep reading `block` after it returns, until settle():
  /// then `lent` is set, and the caller leaves the block's memory as it is until then.
  virtual Status write_lent(std::string_view block, bool& lent) {
    lent = false;
    return write(block);
  }
  /// Bytes that the caller will write next, after everything written so far and everything it
  /// saw ahead before, shown while its copy of them is still in the processor's cache: a sink
  /// that hashes its output (a file tracked for checkpoints) hashes them now, and not again when
  /// they are written. Whatever the caller did not show is hashed as it is written.
  virtual void see_ahead(std::string_view bytes) { (void)bytes; }
  /// How long a next block of at most `bytes` bytes can be for write() to send it past the page
  /// cache (see sinks/direct_writer.h), but for the bytes before its first page boundary: a
  /// length that ends on a page boundary of the file; zero for a sink that writes no such block.
  virtual size_t direct_prefix(size_t bytes) const {
    (void)bytes;
    return 0;
  }
  /// The size of the regular file this sink appends to, when it knows it; none for pipes,
  /// terminals, standard output and compressed output.
  virtual std::optional<uint64_t> file_size() const { return std::nullopt; }
  /// While its input is quiet: a failure of what the sink feeds that shows without a write
  /// (a child that ended with an error); none for files.
  virtual Status check_while_quiet() { return {}; }
  /// Waits until what the sink feeds has taken every byte written to it so far (an --exec
  /// child: read them from its pipe), so that a checkpoint counts only events a child read;
  /// a child that ended without reading them fails here. A no-op for every other sink.
  virtual Status wait_taken() { return {}; }
  /// Ends the input of what the sink feeds, without waiting for it to finish (an --exec child:
  /// once it has read all of its input), so that many can wind down at once; finish() then
  /// waits. A no-op for every other sink. No write may follow.
  virtual Status end_input() { return {}; }
  /// Flushes and closes; no write may follow.
  virtual Status finish() = 0;
  /// The path (or "<stdout>") used in messages.
  virtual const std::string& name() const = 0;
  /// Waits until the blocks written are in the file, where another thread writes them (see
  /// sinks/direct_writer.h), and reports a failure among them: a checkpoint counts only what
  /// is in its files.
  virtual Status settle() { return {}; }
  /// Makes what was written durable (fsync); a no-op for pipes and terminals.
  virtual Status sync() { return {}; }
  /// The file's size and content hash so far (a file sink opened for checkpoints; else zero).
  virtual OutputState state() const { return {}; }
  /// A file reopened to continue a run (reopen_file_sink): cuts it back to the size its
  /// checkpoint records. Called once every output of the run has passed its checks, so that a
  /// resume refused over one output cuts none; the first write, a sync() or finish() cut
  /// otherwise. A no-op for every other sink.
  virtual Status cut_back() { return {}; }
  /// A file sink opened for checkpoints: whether its path still names the file written, as
  /// long as the bytes written (asked once they are settled). A file removed, replaced or cut
  /// short behind the run's back does not hold what the run wrote to it, and no checkpoint may
  /// then count those bytes. A no-op for every other sink.
  virtual Status check_in_place() const { return {}; }
};

}  // namespace keyshard
