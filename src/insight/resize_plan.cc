#include "insight/resize_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include "input/chunk_reader.h"
#include "insight/key_sample.h"
#include "insight/run_stats.h"
#include "keys/key_extractor.h"
#include "util/interrupt.h"
#include "util/number_text.h"

namespace keyshard {
namespace {

constexpr HashKind kAllHashes[] = {HashKind::kMurmur2, HashKind::kCrc32, HashKind::kFnv1a,
                                   HashKind::kMd5,     HashKind::kXxh3,  HashKind::kJump};
constexpr size_t kHashCount = std::size(kAllHashes);
constexpr uint64_t kKeysToTellApart = 100;  // fewer distinct keys: shares are mostly chance
// Distinct keys counted one by one; past this many, a sample of them (see insight/key_sample.h):
// at most 32 MiB, however many keys the input holds.
constexpr size_t kKeySampleCapacity = size_t{1} << 20;
// The keys' hashes for the sample are seeded apart from those of xxh3 and jump, which hash the
// key with XXH3 unseeded: the sample then favours no partition of theirs.
constexpr uint64_t kKeySampleSeed = 0x6b657973616d706cull;

// A count of the sample's keys scaled to the input: times 2^level, at most UINT64_MAX.
uint64_t scaled_up(uint64_t count, unsigned level) {
  if (count == 0) return 0;
  return level < 64 && count <= UINT64_MAX >> level ? count << level : UINT64_MAX;
}

}  // namespace

double ResizePlan::ideal() const {
  const uint32_t larger = std::max(from, to);
  return larger == 0 ? 0.0 : static_cast<double>(larger - std::min(from, to)) / larger;
}

Status compute_resize_plan(const RunConfig& config, uint32_t from, uint32_t to, ResizePlan& plan) {
  plan = ResizePlan{};
  plan.from = from;
  plan.to = to;
  std::vector<Partitioner> before, after;
  for (HashKind hash : kAllHashes) {
    before.emplace_back(hash, from);
    after.emplace_back(hash, to);
    plan.per_hash.push_back(ResizeFigures{hash});
  }
  // Per key, bit h of its flags: the key changes partition under kAllHashes[h]. A key in the
  // sample has them worked out once; any other key, at each of its events.
  KeySample keys(kKeySampleCapacity);
  const auto moves = [&](std::string_view key) {
    uint8_t moved = 0;
    for (size_t h = 0; h < kHashCount; ++h) {
      if (before[h].partition_of(key) != after[h].partition_of(key)) {
        moved |= static_cast<uint8_t>(1u << h);
      }
    }
    return moved;
  };
  KeyExtractor extractor(config.keys);
  ChunkReader reader(config.inputs, config.chunk_size, config.max_line_size);
  Chunk chunk;
  Status status;
  std::vector<uint64_t> input_lines(config.inputs.size() + 1);  // per input: lines read so far
  // A signal stops the reading, before a chunk or by cutting a read short; one that comes once
  // the input has been read stops nothing.
  const auto stopped = [&] { return interrupt_signal() != 0 && !reader.at_end(); };
  while (!stopped() && reader.next(chunk, status)) {
    input_lines.at(chunk.input) += chunk.line_count();
    const size_t readable_end = chunk.readable_end();
    for (size_t i = 0; i < chunk.line_count(); ++i) {
      ++plan.lines;
      const Extraction extraction = extractor.extract(
          chunk.line(i), readable_end - chunk.line_starts[i], chunk.starts_input(i));
      if (!extraction.ok) {
        if (extraction.reason == BadReason::kMissingKey) ++plan.missing_key;
        continue;
      }
      ++plan.events;
      bool first = false;
      uint8_t* kept = keys.note(
          XXH3_64bits_withSeed(extraction.key.data(), extraction.key.size(), kKeySampleSeed),
          &first);
      if (kept != nullptr && first) *kept = moves(extraction.key);
      const uint8_t moved = kept != nullptr ? *kept : moves(extraction.key);
      for (size_t h = 0; h < kHashCount; ++h) plan.per_hash[h].events_moved += (moved >> h) & 1;
    }
  }
  if (stopped() || (!status && interrupt_signal() != 0)) {
    plan.interrupted = interrupt_signal();
    status = {};  // (a read cut short by it)
  }
  if (!status && reader.failed_line()) {
    // Every line before it was read: their count gives its number, as split and stats say.
    return Status::error(status.reason(),
                         fmt::format("{}:{}", status.where(),
                                     input_lines.at(reader.failed_line()->input) + 1))
        .because(status.cause());
  }
  if (!status) return status;
  plan.keys_in_sample = keys.size();
  plan.sample_level = keys.level();
  plan.distinct_keys = scaled_up(keys.size(), keys.level());
  std::vector<uint64_t> moved_in_sample(kHashCount);
  for (const uint8_t moved : keys.flags()) {
    for (size_t h = 0; h < kHashCount; ++h) moved_in_sample[h] += (moved >> h) & 1u;
  }
  for (size_t h = 0; h < kHashCount; ++h) {
    plan.per_hash[h].keys_moved = scaled_up(moved_in_sample[h], keys.level());
  }
  return {};
}

std::string format_plan_text(const ResizePlan& plan) {
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it,
                 "keyshard plan: {} -> {} partitions, over {} event{} and {}{} distinct key{}\n",
                 with_commas(plan.from), with_commas(plan.to), with_commas(plan.events),
                 plan.events == 1 ? "" : "s",
                 plan.sample_level == 0 ? "" : "about ", with_commas(plan.distinct_keys),
                 plan.distinct_keys == 1 ? "" : "s");
  if (plan.sample_level != 0) {
    fmt::format_to(it,
                   "keys moved: measured on a sample of {} of them (1 in {}, by hash); events "
                   "moved: exact\n",
                   with_commas(plan.keys_in_sample), with_commas(scaled_up(1, plan.sample_level)));
  }
  if (plan.interrupted != 0) out += interrupted_report_line(plan.interrupted);
  out += "\npartitioner   keys moved   events moved\n";
  const ResizeFigures* best = nullptr;
  for (const ResizeFigures& figures : plan.per_hash) {
    fmt::format_to(it, "{:<11} {:>11.1f}% {:>13.1f}%\n", hash_name(figures.hash),
                   100 * share_of(figures.keys_moved, plan.distinct_keys),
                   100 * share_of(figures.events_moved, plan.events));
    if (best == nullptr || figures.keys_moved < best->keys_moved) best = &figures;
  }
  fmt::format_to(it,
                 "{:<11} {:>11.1f}% {:>13.1f}%   (what a perfect scheme moves on average)\n\n",
                 "ideal", 100 * plan.ideal(), 100 * plan.ideal());
  if (plan.from == plan.to) {
    out += "The count does not change: no key moves.\n";
  } else if (plan.distinct_keys < kKeysToTellApart) {
    fmt::format_to(it, "Too few distinct keys ({}) to tell the partitioners apart.\n",
                   with_commas(plan.distinct_keys));
  } else if (best != nullptr) {
    // Shares within sampling noise of the fewest are as good as it: those partitioners are
    // named together. The noise: three standard deviations of the difference of two shares
    // over this many keys (the fewest is itself the lowest of six draws).
    const double least = share_of(best->keys_moved, plan.distinct_keys);
    const double noise = 3 * std::sqrt(2 * least * (1 - least) /
                                       static_cast<double>(plan.keys_in_sample));
    std::vector<std::string> fewest;
    double most = least;
    for (const ResizeFigures& figures : plan.per_hash) {
      const double share = share_of(figures.keys_moved, plan.distinct_keys);
      if (share <= least + noise) {
        fewest.emplace_back(hash_name(figures.hash));
        most = std::max(most, share);
      }
    }
    const std::string range = most - least < 0.0005
                                  ? fmt::format("{:.1f}%", 100 * least)
                                  : fmt::format("{:.1f}-{:.1f}%", 100 * least, 100 * most);
    if (fewest.size() == plan.per_hash.size()) {
      fmt::format_to(it, "On this input every partitioner moves about as many keys ({}).", range);
    } else if (fewest.size() == 1) {
      fmt::format_to(it, "Recommendation: {} moves the fewest keys ({}).", fewest[0], range);
    } else {
      const std::string last = fewest.back();
      fewest.pop_back();
      fmt::format_to(it,
                     "Recommendation: {} and {} move the fewest keys ({}; they differ by no more "
                     "than chance over {} keys).",
                     fmt::join(fewest, ", "), last, range, plan.keys_in_sample);
    }
    // What the modulo partitioners do, as measured: between most counts they move far more than
    // the ideal, but not when one count is a multiple of the other, nor past the values a hash
    // takes (murmur2 and fnv1a give 31 bits: between 2^31 - 1 and 2^31 - 2 partitions, they
    // move no key at all).
    const double ideal = plan.ideal();
    std::vector<std::string> far;
    size_t modulo = 0;
    for (const ResizeFigures& figures : plan.per_hash) {
      if (figures.hash == HashKind::kJump) continue;
      ++modulo;
      if (share_of(figures.keys_moved, plan.distinct_keys) > ideal + noise + 0.02) {
        far.emplace_back(hash_name(figures.hash));
      }
    }
    const bool multiple = plan.from % plan.to == 0 || plan.to % plan.from == 0;
    const std::string jump =
        "jump stays close to the ideal on any resize, but does not match Kafka's own "
        "partitioning.\n";
    if (far.empty()) {
      out += multiple ? " As one count is a multiple of the other, the modulo partitioners "
                        "(murmur2, crc32, fnv1a, md5, xxh3) move about the ideal here; between "
                        "other counts they move far more. J" + jump.substr(1)
                      : " The modulo partitioners (murmur2, crc32, fnv1a, md5, xxh3) move about "
                        "the ideal here; " + jump;
    } else if (far.size() == modulo) {
      out += " Modulo partitioners (murmur2, crc32, fnv1a, md5, xxh3) move far more than the "
             "ideal unless one count is a multiple of the other; " + jump;
    } else {
      const std::string last = far.back();
      far.pop_back();
      out += far.empty() ? fmt::format(" {} moves far more than the ideal here; {}", last, jump)
                         : fmt::format(" {} and {} move far more than the ideal here; {}",
                                       fmt::join(far, ", "), last, jump);
    }
  }
  return out;
}

std::string format_plan_json(const ResizePlan& plan) {
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it,
                 "{{\n  \"from\": {},\n  \"to\": {},\n  \"complete\": {},\n  \"lines\": {},\n"
                 "  \"events\": {},\n  \"distinct_keys\": {},\n  \"keys_in_sample\": {},\n"
                 "  \"key_sample_rate\": {},\n  \"ideal_share\": {:.6f},\n  \"partitioners\": [",
                 plan.from, plan.to, plan.interrupted == 0, plan.lines, plan.events,
                 plan.distinct_keys, plan.keys_in_sample,
                 std::ldexp(1.0, -static_cast<int>(plan.sample_level)), plan.ideal());
  for (size_t h = 0; h < plan.per_hash.size(); ++h) {
    const ResizeFigures& figures = plan.per_hash[h];
    fmt::format_to(it,
                   "{}\n    {{\"hash\": \"{}\", \"keys_moved\": {}, \"events_moved\": {}, "
                   "\"keys_moved_share\": {:.6f}, \"events_moved_share\": {:.6f}}}",
                   h ? "," : "", hash_name(figures.hash), figures.keys_moved, figures.events_moved,
                   share_of(figures.keys_moved, plan.distinct_keys),
                   share_of(figures.events_moved, plan.events));
  }
  out += "\n  ]\n}\n";
  return out;
}

}  // namespace keyshard
