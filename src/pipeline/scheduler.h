// The hand-offs between the reader and the workers. The calling thread reads; `workers` threads
// each both route chunks (any chunk, in parallel) and own a fixed set of partitions, whose share
// of every chunk they apply in sequence order. A worker prefers applying the next chunk it owns
// over routing a new one, so chunks are released early. A fixed pool of chunks bounds memory:
// when all are in flight the reader waits, and only a freed chunk wakes it (workers wait apart,
// for work). One mutex guards only the hand-offs (a few per megabyte of input), never a line.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "checkpoint/checkpointer.h"
#include "input/chunk.h"
#include "insight/run_stats.h"
#include "pipeline/partition_owner.h"
#include "pipeline/router.h"
#include "pipeline/salt_sequencer.h"
#include "util/status.h"

namespace keyshard {

class Scheduler {
 public:
  /// `sequencer`: null without round-robin salting; `checkpointer`: null without checkpoints.
  Scheduler(unsigned workers, SaltSequencer* sequencer, Checkpointer* checkpointer);

  // Reader side ------------------------------------------------------------------------------

  /// A free chunk to fill, or nullptr when the run is stopping.
  Chunk* acquire();
  /// Gives back a chunk from acquire() that holds nothing to route.
  void release_unused(Chunk* chunk);
  /// Hands a filled chunk (its sequence the next one) to the workers.
  void publish(Chunk* chunk);
  /// No chunk follows the last one published.
  void end_of_input();
  /// Frees the memory of every chunk: once the workers have ended, and no chunk is read.
  void release_chunks();

  // Worker side ------------------------------------------------------------------------------

  /// Worker `worker`'s loop: routes, sequences and applies chunks until the input ends (every
  /// published chunk applied by its owner) or the run stops.
  void work(unsigned worker, Router& router, PartitionOwner& owner);

  // Either side ------------------------------------------------------------------------------

  /// A failure outside the chunks (the --exec collector): stop everything now.
  void abort(Status status);
  /// The failure that stopped the run (the earliest chunk's), or ok.
  Status error();
  /// Thread-seconds per stage so far.
  StageTimes times();

 private:
  struct Slot {
    Chunk* chunk = nullptr;
    bool routed = false;
    bool sequenced = false;  // routed, and its round-robin salting settled (if any)
    unsigned owners_left = 0;
    bool unrouted = false;  // its routing failed (memory ran out): no owner applies it
  };

  /// Records a failure while applying chunk `sequence` and stops the run there: no more input
  /// is read, and the other owners still apply every chunk up to and including that one, so the
  /// outputs hold exactly the input before the failure (a bad line under --on-bad fail, a
  /// closed stdout, a write error). The earliest chunk's failure is the one reported. Called
  /// with mutex_ held.
  void fail(Status status, uint64_t sequence);

  const unsigned workers_;
  SaltSequencer* const sequencer_;  // null without round-robin salting
  Checkpointer* const checkpointer_;  // null without checkpoints
  std::mutex mutex_;
  std::condition_variable changed_;      // workers wait on it: a chunk to route or to apply
  std::condition_variable chunk_freed_;  // the reader waits on it: a free chunk
  std::vector<Chunk> pool_;
  // Everything below is guarded by mutex_.
  std::vector<Chunk*> free_;
  std::deque<Chunk*> to_route_;
  std::vector<Slot> slots_;  // chunk with sequence s sits at s % size while in flight
  std::vector<uint64_t> next_to_apply_;  // per worker: the next sequence its owner applies
  uint64_t published_ = 0;
  uint64_t next_to_sequence_ = 0;
  bool sequencing_ = false;
  bool input_done_ = false;
  bool stopping_ = false;                 // no more input wanted
  uint64_t stop_after_ = UINT64_MAX;      // the last chunk any owner may apply
  Status error_;
  uint64_t error_sequence_ = UINT64_MAX;
  StageTimes times_;  // thread-seconds per stage, added under mutex_ after each task
};

}  // namespace keyshard
