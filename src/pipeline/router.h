// The router stage: for one chunk, finds the lines, extracts each key, hashes it to a partition
// and groups the line indices by partition (a counting sort that keeps input order within each
// partition). Routers run in parallel on different chunks; each owns its extractor.
#pragma once

#include <vector>

#include "hash/partitioner.h"
#include "input/chunk.h"
#include "insight/heavy_hitters.h"
#include "keys/key_extractor.h"
#include "pipeline/run_config.h"

namespace keyshard {

class Router {
 public:
  explicit Router(const RunConfig& config);

  /// Fills the routing fields of `chunk` from its text.
  void route(Chunk& chunk);

  /// The heaviest keys among the events this router has routed.
  const HeavyHitters& heavy_hitters() const { return heavy_hitters_; }

 private:
  void group_by_partition(Chunk& chunk);

  const RunConfig& config_;
  KeyExtractor extractor_;
  Partitioner partitioner_;
  std::vector<uint32_t> cursor_;  // scratch for the counting sort
  HeavyHitters heavy_hitters_{256};
};

}  // namespace keyshard
