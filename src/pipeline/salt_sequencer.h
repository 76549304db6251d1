// Round-robin salting (--salt KEY:K without --salt-by) deals a hot key's events over its K
// sub-keys in input order, so it needs the number of that key's earlier events, which only a
// pass in input order knows; so does --hot-keys auto, which salts a key from the event where
// its share of the events so far crosses a threshold. The sequencer is that pass: for each
// chunk, in sequence order, it settles the salted lines, then groups the chunk by partition.
// It runs on one worker at a time, between routing and the owners.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "hash/partitioner.h"
#include "input/chunk.h"
#include "insight/heavy_hitters.h"
#include "insight/run_stats.h"
#include "keys/key_extractor.h"
#include "pipeline/run_config.h"

namespace keyshard {

class JsonKeyExtractor;

class SaltSequencer {
 public:
  explicit SaltSequencer(const RunConfig& config);
  ~SaltSequencer();

  /// Settles the salted lines of `chunk`, which must be the next chunk in sequence.
  void sequence(Chunk& chunk);

  /// The keys --hot-keys auto chose to salt, in the order it chose them.
  const std::vector<HotKeyDecision>& decisions() const { return decisions_; }

  /// Everything the next chunk's salting depends on, for a checkpoint; and back.
  SaltState snapshot() const;
  void restore(const SaltState& state);

 private:
  void detect_hot_keys(Chunk& chunk);
  uint32_t deal(std::string_view key, uint32_t sub_keys, uint64_t& dealt, int32_t& index);

  const RunConfig& config_;
  Partitioner partitioner_;
  std::vector<uint64_t> dealt_;  // per --salt entry: events dealt so far
  std::string sub_key_;
  std::vector<uint32_t> cursor_;
  // --hot-keys auto
  std::unique_ptr<KeyExtractor> extractor_;  // the bytes of a key once it is salted
  std::unordered_set<uint64_t> named_;       // key hashes of the --salt keys: never automatic
  std::unique_ptr<JsonKeyExtractor> salt_by_;  // --salt-by PATH
  HeavyHitters shares_{kHotKeyCounters};     // shares of the events seen so far, by key hash
  std::unordered_map<uint64_t, size_t> automatic_;  // key hash -> index in decisions_
  std::vector<uint64_t> automatic_dealt_;
  std::vector<HotKeyDecision> decisions_;
  size_t decided_bytes_ = 0;  // the bytes of decisions_' keys (see kMaxHotKeyBytes)
};

}  // namespace keyshard
