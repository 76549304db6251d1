// Round-robin salting (--salt KEY:K without --salt-by) deals a hot key's events over its K
// sub-keys in input order, so it needs the number of that key's earlier events, which only a
// pass in input order knows. The sequencer is that pass: for each chunk, in sequence order, it
// settles just the salted lines the router left pending, then groups the chunk by partition.
// It runs on one worker at a time, between routing and the owners.
#pragma once

#include <string>
#include <vector>

#include "hash/partitioner.h"
#include "input/chunk.h"
#include "pipeline/run_config.h"

namespace keyshard {

class SaltSequencer {
 public:
  explicit SaltSequencer(const RunConfig& config);

  /// Settles the pending salted lines of `chunk`, which must be the next chunk in sequence.
  void sequence(Chunk& chunk);

 private:
  const RunConfig& config_;
  Partitioner partitioner_;
  std::vector<uint64_t> dealt_;  // per --salt entry: events dealt so far
  std::string sub_key_;
  std::vector<uint32_t> cursor_;
};

}  // namespace keyshard
