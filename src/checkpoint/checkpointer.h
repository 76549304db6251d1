// The checkpointer: assembles consistent cuts while a run goes on. The reader marks a chunk as
// the end of a checkpoint interval and says where the inputs stand after it; every owner, once
// it has applied that chunk, flushes (and with --commit sync, fsyncs) its outputs and reports
// their sizes and counters; the salt sequencer reports its state. The owner whose report
// completes a cut writes the checkpoint. Owners report cuts in sequence order, so checkpoints
// reach the disk in order, each one after every byte it covers.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
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
};

class Checkpointer {
 public:
  /// `base` gives the options and flags every checkpoint of this run carries; `owners` reports
  /// complete a cut; `with_salt`: the sequencer reports too.
  Checkpointer(std::string dir, Checkpoint base, unsigned owners, bool with_salt);

  void expect(uint64_t sequence, ReaderCut cut);
  void salt_state(uint64_t sequence, SaltState state);
  /// Adds an owner's report; the one that completes the cut writes the checkpoint.
  Status report(uint64_t sequence, OwnerCut cut);

  /// A checkpoint from complete parts, outside the run (its start and its end).
  Checkpoint assemble(ReaderCut reader, std::vector<OwnerCut> owners,
                      std::optional<SaltState> salt) const;
  Status write(const Checkpoint& checkpoint);

  uint64_t written() const { return written_.load(); }

 private:
  struct Pending {
    std::optional<ReaderCut> reader;
    std::optional<SaltState> salt;
    std::vector<OwnerCut> owners;
  };
  bool complete(const Pending& pending) const;

  const std::string dir_;
  const Checkpoint base_;
  const unsigned owners_;
  const bool with_salt_;
  std::mutex mutex_;
  std::map<uint64_t, Pending> pending_;  // guarded by mutex_
  std::atomic<uint64_t> written_{0};
};

}  // namespace keyshard
