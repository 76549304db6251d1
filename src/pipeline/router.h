// The router stage: for each line of one chunk (the reader found them), extracts the key,
// hashes it to a partition and groups the line indices by partition (a counting sort that keeps
// input order within each partition). Routers run in parallel on different chunks; each owns
// its extractor.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
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

class JsonKeyExtractor;

/// Fills order and group_begin from the destinations (a counting sort that keeps input order
/// within each partition); `cursor` is scratch.
void group_by_partition(Chunk& chunk, uint32_t partitions, std::vector<uint32_t>& cursor);

class Router {
 public:
  /// `progress` (may be null) counts the lines routed, for the progress line.
  Router(const RunConfig& config, ProgressCounters* progress);
  ~Router();

  /// Fills the routing fields of `chunk` from its text.
  void route(Chunk& chunk);

  /// Merges into `into`, and forgets, this router's heavy-hitter summaries of the checkpoint
  /// intervals up to `interval` (each interval's chunks must all have been routed). A
  /// checkpoint thus records the summary of exactly the events before its cut.
  void take_heavy_hitters(uint32_t interval, HeavyHitters& into);
  /// Likewise, for every interval: once the run is over.
  void take_all_heavy_hitters(HeavyHitters& into) { take_heavy_hitters(UINT32_MAX, into); }

 private:
  /// The partition of an event whose key is salted (--salt): that of one of its sub-keys.
  uint32_t salted_partition(Chunk& chunk, size_t line, std::string_view key, size_t salt,
                            size_t readable);

  const RunConfig& config_;
  KeyExtractor extractor_;
  Partitioner partitioner_;
  std::vector<uint32_t> cursor_;  // scratch for the counting sort
  /// The summary of the chunks of `interval` this router routed.
  HeavyHitters& heavy_hitters_of(uint32_t interval);

  struct IntervalSummary {
    uint32_t interval;
    HeavyHitters summary{kHeavyHitterCounters};
  };
  std::mutex summaries_mutex_;  // taken once a chunk, and when a checkpoint takes summaries
  std::deque<IntervalSummary> summaries_;  // by interval (a router routes chunks in order)
  ProgressCounters* progress_;
  std::unordered_map<std::string_view, size_t> salt_index_;  // salted key -> its --salt entry
  std::unique_ptr<JsonKeyExtractor> salt_by_;  // --salt-by FIELD (the line is valid already)
  std::string sub_key_;
  int32_t last_sub_key_ = -1;         // the sub-key of the line just routed, or -1
};

}  // namespace keyshard
