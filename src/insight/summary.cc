#include "insight/summary.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/json_text.h"
#include "util/number_text.h"
#include "util/status.h"

namespace keyshard {
namespace {

constexpr uint32_t kPartitionTableLimit = 16;  // longer tables are summarised by min and max
constexpr size_t kHotKeysShown = 10;  // the keys --hot-keys salted first; the file lists each
constexpr size_t kTopKeysText = 5;
constexpr size_t kTopKeysJson = 10;


double megabytes_per_second(const RunStats& stats) {
  return stats.elapsed_seconds > 0 ? static_cast<double>(stats.bytes_read_now) / 1e6 /
                                         stats.elapsed_seconds
                                   : 0.0;
}

// An input by index; a decision an earlier --incremental run made may name an input this run
// neither reads nor keeps a position of (kEarlierInput): it has no name here.
std::optional<std::string> input_name(const RunStats& stats, uint32_t input) {
  if (input >= stats.inputs.size()) return std::nullopt;
  return stats.inputs[input];
}

// A hot key as the reports show it: its first bytes, like the heaviest keys (the whole key
// stays in the checkpoint).
HeavyHitters::Entry shown_key(const HotKeyDecision& decision) {
  const bool cut = decision.key.size() > HeavyHitters::kKeyBytes;
  return HeavyHitters::Entry{decision.key.substr(0, HeavyHitters::kKeyBytes), cut, decision.events};
}

}  // namespace

std::string format_summary_text(const RunStats& stats, const RunConfig& config) {
  std::string out;
  auto it = std::back_inserter(out);
  const size_t inputs = stats.inputs.size() - std::min(stats.first_shown_input, stats.inputs.size());
  fmt::format_to(it, "keyshard: {} line{} from {} input{}", with_commas(stats.lines_read),
                 stats.lines_read == 1 ? "" : "s", inputs, inputs == 1 ? "" : "s");
  if (stats.bytes_read_now < stats.bytes_read) {
    // A run continued (by resume, or by the --incremental run after an interrupted one): the
    // counts are the whole run's, the time and the speed this process's.
    fmt::format_to(it, " over the whole run; this process read {:.1f} MB in {:.2f} s ({:.1f} MB/s)\n",
                   static_cast<double>(stats.bytes_read_now) / 1e6, stats.elapsed_seconds,
                   megabytes_per_second(stats));
  } else {
    fmt::format_to(it, " in {:.2f} s ({:.1f} MB/s)\n", stats.elapsed_seconds,
                   megabytes_per_second(stats));
  }
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
  for (size_t i = 0; i < stats.salted_events.size() && i < config.salts.size(); ++i) {
    // (As the heaviest keys are shown: base64 when not UTF-8.)
    const std::string key = HeavyHitters::display({config.salts[i].first, false, 0});
    fmt::format_to(it, "  salted {} over {} sub-keys: {} event{}\n", key, config.salts[i].second,
                   with_commas(stats.salted_events[i]), stats.salted_events[i] == 1 ? "" : "s");
  }
  const auto& decisions = stats.hot_key_decisions;
  for (size_t i = 0; i < decisions.size() && i < kHotKeysShown; ++i) {
    const HotKeyDecision& decision = decisions[i];
    const std::string key = HeavyHitters::display(shown_key(decision));
    const std::optional<std::string> input = input_name(stats, decision.input);
    fmt::format_to(it, "  hot key {} salted over {} sub-keys from {} byte {}: {} event{}\n",
                   key, decision.sub_keys,
                   input ? visible_controls(*input) : "an earlier run's input, gone since,",
                   decision.offset, with_commas(decision.events), decision.events == 1 ? "" : "s");
  }
  if (decisions.size() > kHotKeysShown) {
    fmt::format_to(it, "  and {} more hot keys salted{}\n",
                   with_commas(decisions.size() - kHotKeysShown),
                   config.to_stdout ? "" : fmt::format(" ({} lists each)", kSummaryFileName));
  }
  if (decisions.size() >= kMaxHotKeyDecisions) {
    fmt::format_to(it, "  (at most {} keys are salted by --hot-keys: keys found hot after those "
                       "were not)\n", with_commas(kMaxHotKeyDecisions));
  }
  fmt::format_to(it, "  partitions {} ({})  skew {:.2f} events, {:.2f} bytes (max/mean)\n",
                 config.partitions, hash_name(config.hash), stats.skew(), stats.byte_skew());
  const auto& events = stats.partition_events;
  if (config.partitions <= kPartitionTableLimit) {
    for (uint32_t p = 0; p < config.partitions; ++p) {
      const uint64_t bytes = stats.partition_bytes[p];
      fmt::format_to(it, "  {:>5}  {:>14} {:<6}  {:>16} {}\n", p, with_commas(events[p]),
                     events[p] == 1 ? "event" : "events", with_commas(bytes),
                     bytes == 1 ? "byte" : "bytes");
    }
  } else if (!events.empty()) {
    const auto [least, most] = std::minmax_element(events.begin(), events.end());
    fmt::format_to(it, "  fewest events: partition {} ({})  most: partition {} ({})\n",
                   least - events.begin(), with_commas(*least), most - events.begin(),
                   with_commas(*most));
  }
  if (config.verbose) {
    const StageTimes& times = stats.stage_times;
    fmt::format_to(it,
                   "  stages (thread-seconds): read {:.2f}  route {:.2f}  salt {:.2f}  write {:.2f}"
                   "  ({} chunk{}, {} read in place, {} thread{})\n",
                   times.read, times.route, times.sequence, times.write, with_commas(times.chunks),
                   times.chunks == 1 ? "" : "s",
                   times.chunks_in_place == 0 ? "none" : with_commas(times.chunks_in_place),
                   config.threads, config.threads == 1 ? "" : "s");
    if (config.checkpoints) {
      fmt::format_to(it, "  checkpoints during the run: {}", with_commas(times.checkpoints));
      if (config.commit_sync) {
        fmt::format_to(it, "  outputs synced between them: {}", with_commas(times.syncs_ahead));
      }
      out += '\n';
    }
  }
  const HeavyHitters& heavy = stats.heavy_hitters;
  auto top = heavy.top(kTopKeysText);
  if (heavy.total() > 0) {
    const uint64_t bound = heavy.error_bound();
    fmt::format_to(it, "  heaviest keys ({}):\n", heavy.accuracy(with_commas(bound)));
    // A count within the bound tells nothing of its key (one not kept may have had as many):
    // such keys are not listed as the heaviest, only what the others can have at most.
    const auto noise = std::find_if(top.begin(), top.end(),
                                    [bound](const auto& entry) { return entry.count <= bound; });
    // What any key not listed can have, when all above the bound are listed: a key not kept,
    // the bound; one kept with a count within it, that count and the bound. (When the list is
    // full, a key after it may have more: nothing is said.)
    const bool full = noise == top.end() && top.size() == kTopKeysText;
    const uint64_t others_at_most =
        bound == 0 || full ? 0 : (noise == top.end() ? 0 : noise->count) + bound;
    top.erase(noise, top.end());
    for (const auto& entry : top) {
      fmt::format_to(it, "    {:<32} {:>6.2f}%  {:>12} event{}\n", HeavyHitters::display(entry),
                     100 * share_of(entry.count, heavy.total()), with_commas(entry.count),
                     entry.count == 1 ? "" : "s");
    }
    if (others_at_most != 0) {
      fmt::format_to(it, "    {} at most {} events ({:.2f}%)\n",
                     top.empty() ? "none stands out: each key has" : "any other key has",
                     with_commas(others_at_most), 100 * share_of(others_at_most, heavy.total()));
    }
  }
  return out;
}

std::string format_summary_json(const RunStats& stats, const RunConfig& config) {
  std::string out = "{\n  \"keyshard_version\": \"" KEYSHARD_VERSION "\",\n  \"inputs\": [";
  auto it = std::back_inserter(out);
  for (size_t i = stats.first_shown_input; i < stats.inputs.size(); ++i) {
    out += i > stats.first_shown_input ? ", " : "";
    append_json_bytes(out, stats.inputs[i]);
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
  fmt::format_to(it, "}},\n  \"skew\": {:.4f},\n  \"skew_bytes\": {:.4f},\n"
                     "  \"elapsed_seconds\": {:.3f},\n  \"mb_per_second\": {:.1f},\n",
                 stats.skew(), stats.byte_skew(), stats.elapsed_seconds,
                 megabytes_per_second(stats));
  fmt::format_to(it, "  \"top_keys_error_bound\": {},\n  \"top_keys\": [",
                 stats.heavy_hitters.error_bound());
  const auto top = stats.heavy_hitters.top(kTopKeysJson);
  for (size_t i = 0; i < top.size(); ++i) {
    out += i ? ",\n    {" : "\n    {";
    HeavyHitters::append_json_key(out, top[i]);
    fmt::format_to(it, ", \"truncated\": {}, \"events\": {}, \"share\": {:.4f}}}",
                   top[i].truncated, top[i].count,
                   share_of(top[i].count, stats.heavy_hitters.total()));
  }
  out += top.empty() ? "],\n" : "\n  ],\n";
  out += "  \"salted\": [";
  for (size_t i = 0; i < stats.salted_events.size() && i < config.salts.size(); ++i) {
    out += i ? ",\n    {" : "\n    {";
    append_json_bytes_member(out, "key", config.salts[i].first, ": ");
    fmt::format_to(it, ", \"sub_keys\": {}, \"events\": {}}}", config.salts[i].second,
                   stats.salted_events[i]);
  }
  out += stats.salted_events.empty() ? "],\n" : "\n  ],\n";
  out += "  \"hot_keys_salted\": [";
  for (size_t i = 0; i < stats.hot_key_decisions.size(); ++i) {
    const HotKeyDecision& decision = stats.hot_key_decisions[i];
    out += i ? ",\n    {" : "\n    {";
    const HeavyHitters::Entry key = shown_key(decision);
    HeavyHitters::append_json_key(out, key);
    fmt::format_to(it, ", \"truncated\": {}", key.truncated);
    out += ", \"input\": ";
    if (const std::optional<std::string> input = input_name(stats, decision.input)) {
      append_json_text(out, *input);
    } else {
      out += "null";  // an earlier run's input, gone since
    }
    fmt::format_to(it, ", \"offset\": {}, \"sub_keys\": {}, \"events\": {}}}", decision.offset,
                   decision.sub_keys, decision.events);
  }
  out += stats.hot_key_decisions.empty() ? "],\n" : "\n  ],\n";
  out += "  \"per_partition\": [\n";
  for (uint32_t p = 0; p < config.partitions; ++p) {
    fmt::format_to(it, "    {{\"partition\": {}, \"events\": {}, \"bytes\": {}}}{}\n", p,
                   stats.partition_events[p], stats.partition_bytes[p],
                   p + 1 < config.partitions ? "," : "");
  }
  out += "  ]\n}\n";
  return out;
}

}  // namespace keyshard
