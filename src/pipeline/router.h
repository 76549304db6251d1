// The router stage: for one chunk, finds the lines, extracts each key, hashes it to a partition
// and groups the line indices by partition (a counting sort that keeps input order within each
// partition). Routers run in parallel on different chunks; each owns its extractor.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hash/partitioner.h"
#include "input/chunk.h"
#include "insight/heavy_hitters.h"
#include "insight/progress.h"
#include "keys/key_extractor.h"
#include "pipeline/run_config.h"

namespace keyshard {

/// Fills order and group_begin from the destinations (a counting sort that keeps input order
/// within each partition); `cursor` is scratch.
void group_by_partition(Chunk& chunk, uint32_t partitions, std::vector<uint32_t>& cursor);

class Router {
 public:
  /// `progress` (may be null) counts the lines routed, for the progress line.
  Router(const RunConfig& config, ProgressCounters* progress);

  /// Fills the routing fields of `chunk` from its text.
  void route(Chunk& chunk);

  /// The heaviest keys among the events this router has routed.
  const HeavyHitters& heavy_hitters() const { return heavy_hitters_; }

 private:
  /// The partition of an event whose key is salted (--salt): that of one of its sub-keys.
  uint32_t salted_partition(Chunk& chunk, size_t line, std::string_view key, size_t salt,
                            size_t readable);

  const RunConfig& config_;
  KeyExtractor extractor_;
  Partitioner partitioner_;
  std::vector<uint32_t> cursor_;  // scratch for the counting sort
  HeavyHitters heavy_hitters_{256};
  ProgressCounters* progress_;
  std::unordered_map<std::string_view, size_t> salt_index_;  // salted key -> its --salt entry
  std::unique_ptr<JsonPathWalker> salt_by_;                  // --salt-by FIELD
  std::string sub_key_;
  int32_t last_sub_key_ = -1;         // the sub-key of the line just routed, or -1
};

}  // namespace keyshard
