// `keyshard plan`: what changing the partition count from N to M would move, for every
// partitioner, measured on real inputs: the share of distinct keys and of events whose
// partition changes, beside the least any scheme must move, |M - N| / max(M, N).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hash/partitioner.h"
#include "pipeline/run_config.h"
#include "util/status.h"

namespace keyshard {

struct ResizeFigures {
  HashKind hash;
  uint64_t keys_moved = 0;  // like distinct_keys, exact or estimated
  uint64_t events_moved = 0;
};

struct ResizePlan {
  uint32_t from = 0;
  uint32_t to = 0;
  uint64_t lines = 0;
  uint64_t events = 0;         // lines with a key
  uint64_t missing_key = 0;    // lines (JSON objects, or delimited lines) without it
  uint64_t distinct_keys = 0;  // exact, or estimated from the sample: keys_in_sample << level
  uint64_t keys_in_sample = 0;  // the keys the key shares are measured over
  unsigned sample_level = 0;    // the sample holds one key in 2^level (0: every key, exact)
  std::vector<ResizeFigures> per_hash;  // in the order of --hash's canonical names
  int interrupted = 0;  // the signal that stopped the reading: the plan covers the lines read
  double ideal() const;        // |M - N| / max(M, N)
};

/// Reads `config.inputs` once. The events moved are exact; the keys moved and the distinct keys
/// are exact up to about a million distinct keys, and estimated from a sample of them past that
/// (memory stays bounded). SIGINT, SIGTERM or SIGHUP (see util/interrupt.h) stops the reading,
/// and the plan covers the lines read.
Status compute_resize_plan(const RunConfig& config, uint32_t from, uint32_t to, ResizePlan& plan);

std::string format_plan_text(const ResizePlan& plan);
std::string format_plan_json(const ResizePlan& plan);

}  // namespace keyshard
