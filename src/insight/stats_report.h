// The report of `keyshard stats`: how a split would load each partition, how skewed that is,
// which keys weigh most, and what salting the heaviest keys would change.
#pragma once

#include <cstdint>
#include <string>

#include "insight/run_stats.h"
#include "pipeline/run_config.h"

namespace keyshard {

struct StatsRequest {
  size_t top = 10;          // heaviest keys to list (and to salt in the what-if)
  uint32_t sub_keys = 8;    // what-if: each listed key spread over this many sub-keys
  bool histogram = false;   // draw bars (on a terminal)
  int interrupted = 0;      // the signal that stopped the reading: the report covers the lines read
};

struct SaltedSkew {
  double skew;          // max/mean events
  size_t keys;          // keys salted in the estimate
  size_t left_out = 0;  // keys cut in the summary: their sub-keys' partitions are not known
};

/// The skew (max/mean events) if each of the `top` heaviest keys were salted over `sub_keys`
/// sub-keys (see salted_key()), their events spread evenly.
SaltedSkew skew_if_salted(const RunStats& stats, const RunConfig& config, size_t top,
                          uint32_t sub_keys);

std::string format_stats_text(const RunStats& stats, const RunConfig& config,
                              const StatsRequest& request);
std::string format_stats_json(const RunStats& stats, const RunConfig& config,
                              const StatsRequest& request);

}  // namespace keyshard
