// The checkpointer: assembles consistent cuts while a run goes on, and writes them from a thread
// of its own. The reader marks a chunk as the end of a checkpoint interval and says where the
// inputs stand after it; every owner, once it has applied that chunk, hands its outputs' bytes to
// the kernel and reports their sizes and counters; the salt sequencer reports its state. A
// complete cut goes to the writer thread, which (with --commit sync) makes the output files
// durable, then writes the checkpoint: the owners never wait for the disk, and
// a checkpoint reaches it only after every byte it covers. Cuts complete in sequence order; when
// the disk lags, the writer skips to the newest. Between checkpoints far apart, the writer can
// also sync ahead of the next one (sync_ahead), so that the disk's work is spread over the run.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "util/status.h"

namespace keyshard {

/// One owner's part of a cut.
struct OwnerCut {
  RunStats stats;
  std::vector<std::pair<uint32_t, OutputState>> outputs;  // (partition, state)
  std::optional<OutputState> dead_letter;
  std::vector<uint64_t> input_lines;  // per input: lines applied so far (owner 0's counts)
};

/// Where the reader stood after a chunk.
struct ReaderCut {
  std::vector<InputPosition> inputs;
  uint32_t current = 0;
  uint64_t bytes_read = 0;  // all runs together
  uint32_t interval = 0;    // the checkpoint interval the cut closes (see Chunk::interval)
};

class Checkpointer {
 public:
  /// `base` gives the options and flags every checkpoint of this run carries; `owners` reports
  /// complete a cut; `with_salt`: the sequencer reports too. `sync_paths`: what to make durable
  /// before each checkpoint (--commit sync): every output file and the directory holding them
  /// (see make_durable). `on_failure` stops the run when a write fails.
  Checkpointer(std::string dir, Checkpoint base, unsigned owners, bool with_salt,
               std::vector<std::string> sync_paths, std::function<void(Status)> on_failure);
  ~Checkpointer();

  /// How a complete cut gets its heavy-hitter summary: `settle(interval)` returns the summary
  /// of every event up to the end of that interval. Set before start(); cuts settle in order.
  void settle_heavy_hitters_with(std::function<HeavyHitters(uint32_t interval)> settle) {
    settle_ = std::move(settle);
  }

  /// Starts the writer thread.
  void start();
  /// Writes what is queued, stops the thread; the first failure, if any.
  Status finish();

  void expect(uint64_t sequence, ReaderCut cut);
  void salt_state(uint64_t sequence, SaltState state);
  /// Adds an owner's report; the one that completes the cut queues it for the writer.
  void report(uint64_t sequence, OwnerCut cut);

  /// A checkpoint from complete parts, outside the run (its start and its end).
  Checkpoint assemble(ReaderCut reader, std::vector<OwnerCut> owners,
                      std::optional<SaltState> salt, HeavyHitters heavy_hitters) const;
  Status write(const Checkpoint& checkpoint);

  uint64_t written() const { return written_.load(); }

  /// Asks the writer thread to make what the outputs hold so far durable, without writing a
  /// checkpoint (a no-op without --commit sync). Returns at once; a sync that fails stops the
  /// run as a failed checkpoint does. Requests made while one waits count once.
  void sync_ahead();
  /// Syncs made by sync_ahead.
  uint64_t synced_ahead() const { return synced_ahead_.load(); }

 private:
  struct Pending {
    std::optional<ReaderCut> reader;
    std::optional<SaltState> salt;
    std::vector<OwnerCut> owners;
  };
  bool complete(const Pending& pending) const;
  void write_queued();
  Status sync_outputs() const;

  const std::string dir_;
  const Checkpoint base_;
  const unsigned owners_;
  const bool with_salt_;
  const std::vector<std::string> sync_paths_;
  const std::function<void(Status)> on_failure_;
  std::function<HeavyHitters(uint32_t)> settle_;
  std::mutex mutex_;
  std::condition_variable queued_changed_;
  // Guarded by mutex_:
  std::map<uint64_t, Pending> pending_;
  std::optional<Checkpoint> queued_;  // the newest complete cut not yet written
  bool sync_requested_ = false;       // by sync_ahead; a queued cut's sync covers it
  bool stopping_ = false;
  Status failure_;
  std::thread writer_;
  std::atomic<uint64_t> written_{0};
  std::atomic<uint64_t> synced_ahead_{0};
};

}  // namespace keyshard
