#include "insight/stats_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "hash/partitioner.h"
#include "util/interrupt.h"
#include "util/json_text.h"
#include "util/number_text.h"

namespace keyshard {
SaltedSkew skew_if_salted(const RunStats& stats, const RunConfig& config, size_t top,
                          uint32_t sub_keys) {
  std::vector<uint64_t> loads = stats.partition_events;
  const Partitioner partitioner(config.hash, config.partitions);
  std::string sub_key;
  SaltedSkew result{0, 0};
  for (const auto& entry : stats.heavy_hitters.top(top)) {
    if (entry.truncated) {  // only its first bytes are known: its partition is not
      ++result.left_out;
      continue;
    }
    ++result.keys;
    uint64_t& home = loads[partitioner.partition_of(entry.key)];
    const uint64_t moved = std::min(entry.count, home);
    home -= moved;
    for (uint32_t i = 0; i < sub_keys; ++i) {
      salted_key(entry.key, i, sub_key);
      loads[partitioner.partition_of(sub_key)] += moved / sub_keys + (i < moved % sub_keys);
    }
  }
  result.skew = load_skew(loads);
  return result;
}

std::string format_stats_text(const RunStats& stats, const RunConfig& config,
                              const StatsRequest& request) {
  std::string out;
  auto it = std::back_inserter(out);
  const uint64_t events = stats.events_written();
  fmt::format_to(it,
                 "keyshard stats: {} event{} from {} line{} of {} input{}; {} partition{} ({})\n",
                 with_commas(events), events == 1 ? "" : "s", with_commas(stats.lines_read),
                 stats.lines_read == 1 ? "" : "s",
                 stats.inputs.size(), stats.inputs.size() == 1 ? "" : "s",
                 with_commas(config.partitions),
                 config.partitions == 1 ? "" : "s", hash_name(config.hash));
  if (request.interrupted != 0) out += interrupted_report_line(request.interrupted);
  if (stats.bad_lines() > 0) {
    out += "bad lines:";
    for (int r = 0; r < kBadReasonCount; ++r) {
      if (stats.bad_by_reason[r] > 0) {
        fmt::format_to(it, " {} {}", bad_reason_name(static_cast<BadReason>(r)),
                       with_commas(stats.bad_by_reason[r]));
      }
    }
    out += '\n';
  }
  out += "\npartition       events   share           bytes\n";
  const uint64_t most =
      std::max<uint64_t>(1, *std::max_element(stats.partition_events.begin(),
                                               stats.partition_events.end()));
  for (uint32_t p = 0; p < config.partitions; ++p) {
    const uint64_t load = stats.partition_events[p];
    fmt::format_to(it, "{:>9} {:>12} {:>6.2f}% {:>15}", p, with_commas(load),
                   100 * share_of(load, events), with_commas(stats.partition_bytes[p]));
    if (request.histogram) {
      out += "  ";
      out.append(static_cast<size_t>(30.0 * static_cast<double>(load) / static_cast<double>(most)),
                 '#');
    }
    out += '\n';
  }
  fmt::format_to(it, "\nskew (max/mean): {:.2f} events, {:.2f} bytes\n", stats.skew(),
                 stats.byte_skew());
  const auto top = stats.heavy_hitters.top(request.top);
  if (!top.empty()) {
    const Partitioner partitioner(config.hash, config.partitions);
    fmt::format_to(it, "\nheaviest keys ({}):\n",
                   stats.heavy_hitters.accuracy(with_commas(stats.heavy_hitters.error_bound())));
    out += "  share       events  partition  key\n";
    for (const auto& entry : top) {
      // Of the events that have a key, as in split's summary (--missing-key partition:P
      // routes others).
      fmt::format_to(it, "{:>6.2f}% {:>12} {:>10}  {}\n",
                     100 * share_of(entry.count, stats.heavy_hitters.total()),
                     with_commas(entry.count),
                     entry.truncated ? std::string("?")
                                     : std::to_string(partitioner.partition_of(entry.key)),
                     HeavyHitters::display(entry));
    }
    const SaltedSkew salted = skew_if_salted(stats, config, request.top, request.sub_keys);
    if (salted.keys == 0) {
      // Only the whole key can be salted, and the report keeps the first bytes of each.
      fmt::format_to(it, "\nwhat if: {} longer than the {} bytes this report keeps of a "
                     "key, so no skew after salting can be worked out",
                     salted.left_out == 1 ? "this key is" : "these keys are all",
                     HeavyHitters::kKeyBytes);
    } else {
      fmt::format_to(it,
                     "\nwhat if: salting {} {} over {} sub-keys{} would make the skew "
                     "{:.2f} (now {:.2f})",
                     salted.keys == 1 ? "this" : "these " + std::to_string(salted.keys),
                     salted.keys == 1 ? "key" : "keys", request.sub_keys,
                     salted.keys == 1 ? "" : " each", salted.skew, stats.skew());
    }
    if (salted.keys > 0 && salted.left_out > 0) {
      fmt::format_to(it, "; {} key{} longer than {} bytes left out", salted.left_out,
                     salted.left_out == 1 ? "" : "s", HeavyHitters::kKeyBytes);
    }
    out += '\n';
  }
  return out;
}

std::string format_stats_json(const RunStats& stats, const RunConfig& config,
                              const StatsRequest& request) {
  std::string out = "{\n  \"inputs\": [";
  auto it = std::back_inserter(out);
  for (size_t i = 0; i < stats.inputs.size(); ++i) {
    out += i ? ", " : "";
    append_json_bytes(out, stats.inputs[i]);
  }
  fmt::format_to(it, "],\n  \"complete\": {},\n  \"hash\": \"{}\",\n  \"partitions\": {},\n"
                     "  \"lines_read\": {},\n  \"events\": {},\n  \"bad_lines\": {{",
                 request.interrupted == 0, hash_name(config.hash), config.partitions,
                 stats.lines_read, stats.events_written());
  for (int r = 0; r < kBadReasonCount; ++r) {
    fmt::format_to(it, "{}\"{}\": {}", r ? ", " : "", bad_reason_name(static_cast<BadReason>(r)),
                   stats.bad_by_reason[r]);
  }
  fmt::format_to(it, "}},\n  \"skew\": {:.4f},\n  \"skew_bytes\": {:.4f},\n  \"per_partition\": [",
                 stats.skew(), stats.byte_skew());
  for (uint32_t p = 0; p < config.partitions; ++p) {
    fmt::format_to(it, "{}\n    {{\"partition\": {}, \"events\": {}, \"bytes\": {}}}",
                   p ? "," : "", p, stats.partition_events[p], stats.partition_bytes[p]);
  }
  const auto top = stats.heavy_hitters.top(request.top);
  const Partitioner partitioner(config.hash, config.partitions);
  fmt::format_to(it, "\n  ],\n  \"top_keys_error_bound\": {},\n  \"top_keys\": [",
                 stats.heavy_hitters.error_bound());
  for (size_t i = 0; i < top.size(); ++i) {
    out += i ? ",\n    {" : "\n    {";
    HeavyHitters::append_json_key(out, top[i]);
    fmt::format_to(it, ", \"truncated\": {}, \"events\": {}, \"share\": {:.6f}, \"partition\": {}}}",
                   top[i].truncated, top[i].count,
                   share_of(top[i].count, stats.heavy_hitters.total()),
                   top[i].truncated ? std::string("null")
                                    : std::to_string(partitioner.partition_of(top[i].key)));
  }
  const SaltedSkew salted = skew_if_salted(stats, config, request.top, request.sub_keys);
  fmt::format_to(it,
                 "{}],\n  \"what_if_salted\": {{\"keys\": {}, \"keys_left_out\": {}, "
                 "\"sub_keys\": {}, \"skew\": {:.4f}}}\n}}\n",
                 top.empty() ? "" : "\n  ", salted.keys, salted.left_out, request.sub_keys,
                 salted.skew);
  return out;
}

}  // namespace keyshard
