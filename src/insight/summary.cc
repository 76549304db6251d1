#include "insight/summary.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/json_text.h"

namespace keyshard {
namespace {

constexpr uint32_t kPartitionTableLimit = 16;  // longer tables are summarised by min and max

double megabytes_per_second(const RunStats& stats) {
  return stats.elapsed_seconds > 0 ? static_cast<double>(stats.bytes_read) / 1e6 /
                                         stats.elapsed_seconds
                                   : 0.0;
}

std::string with_commas(uint64_t value) {
  const std::string digits = std::to_string(value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

}  // namespace

std::string format_summary_text(const RunStats& stats, const RunConfig& config) {
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "keyshard: {} lines from {} input{} in {:.2f} s ({:.1f} MB/s)\n",
                 with_commas(stats.lines_read), stats.inputs.size(),
                 stats.inputs.size() == 1 ? "" : "s", stats.elapsed_seconds,
                 megabytes_per_second(stats));
  fmt::format_to(it, "  written {}  dead-lettered {}  skipped {}\n",
                 with_commas(stats.events_written()), with_commas(stats.dead_lettered),
                 with_commas(stats.skipped));
  if (stats.bad_lines() > 0) {
    out += "  bad lines:";
    for (int r = 0; r < kBadReasonCount; ++r) {
      if (stats.bad_by_reason[r] == 0) continue;
      fmt::format_to(it, " {} {}", bad_reason_name(static_cast<BadReason>(r)),
                     with_commas(stats.bad_by_reason[r]));
    }
    out += '\n';
  }
  if (stats.missing_key_routed > 0) {
    fmt::format_to(it, "  without a key, sent to partition {}: {}\n",
                   *config.missing_key_partition, with_commas(stats.missing_key_routed));
  }
  fmt::format_to(it, "  partitions {} ({})  skew {:.2f} (max/mean events)\n", config.partitions,
                 hash_name(config.hash), stats.skew());
  const auto& events = stats.partition_events;
  if (config.partitions <= kPartitionTableLimit) {
    for (uint32_t p = 0; p < config.partitions; ++p) {
      fmt::format_to(it, "  {:>5}  {:>14} events  {:>16} bytes\n", p, with_commas(events[p]),
                     with_commas(stats.partition_bytes[p]));
    }
  } else if (!events.empty()) {
    const auto [least, most] = std::minmax_element(events.begin(), events.end());
    fmt::format_to(it, "  fewest events: partition {} ({})  most: partition {} ({})\n",
                   least - events.begin(), with_commas(*least), most - events.begin(),
                   with_commas(*most));
  }
  return out;
}

std::string format_summary_json(const RunStats& stats, const RunConfig& config) {
  std::string out = "{\n  \"keyshard_version\": \"" KEYSHARD_VERSION "\",\n  \"inputs\": [";
  auto it = std::back_inserter(out);
  for (size_t i = 0; i < stats.inputs.size(); ++i) {
    out += i ? ", " : "";
    append_json_string(out, stats.inputs[i]);
  }
  fmt::format_to(it, "],\n  \"hash\": \"{}\",\n  \"partitions\": {},\n", hash_name(config.hash),
                 config.partitions);
  fmt::format_to(it,
                 "  \"lines_read\": {},\n  \"bytes_read\": {},\n  \"events_written\": {},\n"
                 "  \"dead_lettered\": {},\n  \"skipped\": {},\n  \"missing_key_routed\": {},\n",
                 stats.lines_read, stats.bytes_read, stats.events_written(), stats.dead_lettered,
                 stats.skipped, stats.missing_key_routed);
  out += "  \"bad_lines\": {";
  for (int r = 0; r < kBadReasonCount; ++r) {
    fmt::format_to(it, "{}\"{}\": {}", r ? ", " : "", bad_reason_name(static_cast<BadReason>(r)),
                   stats.bad_by_reason[r]);
  }
  fmt::format_to(it, "}},\n  \"skew\": {:.4f},\n  \"elapsed_seconds\": {:.3f},\n"
                     "  \"mb_per_second\": {:.1f},\n  \"per_partition\": [\n",
                 stats.skew(), stats.elapsed_seconds, megabytes_per_second(stats));
  for (uint32_t p = 0; p < config.partitions; ++p) {
    fmt::format_to(it, "    {{\"partition\": {}, \"events\": {}, \"bytes\": {}}}{}\n", p,
                   stats.partition_events[p], stats.partition_bytes[p],
                   p + 1 < config.partitions ? "," : "");
  }
  out += "  ]\n}\n";
  return out;
}

}  // namespace keyshard
