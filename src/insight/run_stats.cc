#include "insight/run_stats.h"

#include <algorithm>
#include <numeric>

namespace keyshard {

uint64_t RunStats::events_written() const {
  return std::accumulate(partition_events.begin(), partition_events.end(), uint64_t{0});
}

uint64_t RunStats::bad_lines() const {
  return std::accumulate(bad_by_reason.begin(), bad_by_reason.end(), uint64_t{0});
}

double load_skew(const std::vector<uint64_t>& loads) {
  const uint64_t total = std::accumulate(loads.begin(), loads.end(), uint64_t{0});
  if (total == 0 || loads.empty()) return 1.0;
  const uint64_t most = *std::max_element(loads.begin(), loads.end());
  return static_cast<double>(most) * static_cast<double>(loads.size()) /
         static_cast<double>(total);
}

double RunStats::skew() const { return load_skew(partition_events); }

double RunStats::byte_skew() const { return load_skew(partition_bytes); }

void RunStats::merge(const RunStats& other) {
  lines_read += other.lines_read;
  bytes_read += other.bytes_read;
  dead_lettered += other.dead_lettered;
  skipped += other.skipped;
  missing_key_routed += other.missing_key_routed;
  for (size_t i = 0; i < bad_by_reason.size(); ++i) bad_by_reason[i] += other.bad_by_reason[i];
  invalid_objects += other.invalid_objects;
  if (salted_events.size() < other.salted_events.size()) {
    salted_events.resize(other.salted_events.size());
  }
  for (size_t i = 0; i < other.salted_events.size(); ++i) salted_events[i] += other.salted_events[i];
  if (partition_events.size() < other.partition_events.size()) {
    partition_events.resize(other.partition_events.size());
    partition_bytes.resize(other.partition_bytes.size());
  }
  for (size_t p = 0; p < other.partition_events.size(); ++p) {
    partition_events[p] += other.partition_events[p];
    partition_bytes[p] += other.partition_bytes[p];
  }
}

void RunStats::subtract(const RunStats& earlier) {
  auto minus = [](uint64_t& value, uint64_t taken) { value = value >= taken ? value - taken : 0; };
  minus(lines_read, earlier.lines_read);
  minus(bytes_read, earlier.bytes_read);
  minus(dead_lettered, earlier.dead_lettered);
  minus(skipped, earlier.skipped);
  minus(missing_key_routed, earlier.missing_key_routed);
  for (size_t i = 0; i < bad_by_reason.size(); ++i) minus(bad_by_reason[i], earlier.bad_by_reason[i]);
  minus(invalid_objects, earlier.invalid_objects);
  for (size_t i = 0; i < salted_events.size() && i < earlier.salted_events.size(); ++i) {
    minus(salted_events[i], earlier.salted_events[i]);
  }
  for (HotKeyDecision& decision : hot_key_decisions) {
    for (const HotKeyDecision& before : earlier.hot_key_decisions) {
      if (before.key == decision.key) minus(decision.events, before.events);
    }
  }
  for (size_t p = 0; p < partition_events.size() && p < earlier.partition_events.size(); ++p) {
    minus(partition_events[p], earlier.partition_events[p]);
    minus(partition_bytes[p], earlier.partition_bytes[p]);
  }
}

}  // namespace keyshard
