// The counters of one run. Each partition owner keeps its own RunStats (no sharing between
// threads); the driver merges them once the run is over.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "insight/heavy_hitters.h"
#include "keys/extraction.h"

namespace keyshard {

/// A HotKeyDecision's input when an earlier --incremental run read it and this one no longer
/// names nor carries it.
inline constexpr uint32_t kEarlierInput = UINT32_MAX;

/// A key --hot-keys auto decided to salt: from which event on, and over how many sub-keys.
struct HotKeyDecision {
  std::string key;
  uint32_t input = 0;     // an index into the run's inputs, or kEarlierInput
  uint64_t offset = 0;    // byte offset of the first salted event in that input
  uint32_t sub_keys = 0;
  uint64_t events = 0;    // events salted
};

/// Where the time went (-v): thread-seconds spent in each stage, summed over threads.
struct StageTimes {
  double read = 0;
  double route = 0;
  double sequence = 0;
  double write = 0;
  uint64_t chunks = 0;
  uint64_t chunks_in_place = 0;  // of them, read in place (views of a mapped input file)
  uint64_t checkpoints = 0;  // written while the run went on (not the one at its end)
  uint64_t syncs_ahead = 0;  // output syncs between checkpoints further apart (--commit sync)
};

/// part / whole as a fraction; 0 when whole is 0.
inline double share_of(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

/// max/mean of a set of partition loads; 1.0 when they are all zero.
double load_skew(const std::vector<uint64_t>& loads);

struct RunStats {
  uint64_t lines_read = 0;
  uint64_t bytes_read = 0;
  uint64_t dead_lettered = 0;
  uint64_t skipped = 0;
  uint64_t missing_key_routed = 0;  // events sent to --missing-key partition:P
  std::array<uint64_t, kBadReasonCount> bad_by_reason{};
  uint64_t invalid_objects = 0;  // of the invalid_json lines, those that begin as objects ('{')
  std::vector<uint64_t> partition_events;  // indexed by partition
  std::vector<uint64_t> partition_bytes;   // bytes written, before compression
  std::vector<std::string> inputs;
  size_t first_shown_input = 0;  // inputs before it were only carried over (--incremental)
  double elapsed_seconds = 0;  // of this process
  uint64_t bytes_read_now = 0;  // by this process (not recorded in checkpoints)
  HeavyHitters heavy_hitters{kHeavyHitterCounters};
  std::vector<uint64_t> salted_events;     // per --salt entry
  std::vector<HotKeyDecision> hot_key_decisions;
  StageTimes stage_times;  // thread-seconds per stage, for -v

  explicit RunStats(uint32_t partitions = 0)
      : partition_events(partitions, 0), partition_bytes(partitions, 0) {}

  uint64_t events_written() const;
  uint64_t bad_lines() const;
  /// max/mean events per partition; 1.0 when nothing was written.
  double skew() const;
  /// max/mean bytes per partition.
  double byte_skew() const;
  /// Adds another owner's counters into this one.
  void merge(const RunStats& other);
  /// Takes away the counters of an earlier run that this one continued (--incremental shows
  /// each run's own numbers).
  void subtract(const RunStats& earlier);
};

}  // namespace keyshard
