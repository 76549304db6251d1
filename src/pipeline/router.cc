#include "pipeline/router.h"

#include <optional>

#include "keys/json_key_extractor.h"

namespace keyshard {
namespace {

// With --annotate the fields are inserted before the closing brace, so it must be there (only
// --no-validate can let a line through without one).
bool ends_with_brace(std::string_view line) {
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
    line.remove_suffix(1);
  }
  return !line.empty() && line.back() == '}';
}

}  // namespace

Router::Router(const RunConfig& config, ProgressCounters* progress)
    : config_(config),
      extractor_(config.keys),
      partitioner_(config.hash, config.partitions),
      progress_(progress) {
  for (size_t i = 0; i < config.salts.size(); ++i) salt_index_.emplace(config.salts[i].first, i);
  if (config.salt_by) {
    // Not validated again; a line over 1 MiB is walked in memory that does not grow with it.
    salt_by_ = std::make_unique<JsonKeyExtractor>(std::span(&*config.salt_by, 1), false);
  }
}

Router::~Router() = default;

uint32_t Router::salted_partition(Chunk& chunk, size_t line, std::string_view key,
                                  size_t salt, size_t readable) {
  // With --salt-by, the sub-key is a hash of that field (an event without it counts as
  // round-robin); otherwise the salt sequencer deals the key's events out round-robin, in
  // input order. Either way reruns and resumes place every event the same way.
  ++chunk.salted_events[salt];
  std::optional<Extraction> by;
  if (salt_by_) by = salt_by_->extract(chunk.line(line), readable);
  if (!by || !by->ok) {
    chunk.pending_salts.push_back(PendingSalt{static_cast<uint32_t>(line),
                                              static_cast<uint32_t>(salt)});
    return kToSaltedPending;
  }
  last_sub_key_ = static_cast<int32_t>(sub_key_of_field(by->key, config_.salts[salt].second));
  salted_key(key, static_cast<uint32_t>(last_sub_key_), sub_key_);
  return partitioner_.partition_of(sub_key_);
}

HeavyHitters& Router::heavy_hitters_of(uint32_t interval) {
  std::lock_guard lock(summaries_mutex_);
  if (summaries_.empty() || summaries_.back().interval != interval) {
    summaries_.push_back(IntervalSummary{interval});
  }
  return summaries_.back().summary;  // a deque's elements stay put as it grows
}

void Router::take_heavy_hitters(uint32_t interval, HeavyHitters& into) {
  std::lock_guard lock(summaries_mutex_);
  while (!summaries_.empty() && summaries_.front().interval <= interval) {
    into.merge(summaries_.front().summary);
    summaries_.pop_front();
  }
}

void Router::route(Chunk& chunk) {
  HeavyHitters& heavy_hitters = heavy_hitters_of(chunk.interval);
  const size_t lines = chunk.line_count();  // the reader found the lines
  chunk.destinations.resize(lines);
  chunk.bad_lines.clear();
  chunk.stop_at_line = UINT32_MAX;
  chunk.missing_key_routed = 0;
  chunk.keys.clear();
  if (config_.annotate_key) {
    chunk.key_ends.resize(lines);
    chunk.keyless.assign(lines, false);
  }
  chunk.salted_events.assign(config_.salts.size(), 0);
  chunk.pending_salts.clear();
  if (config_.hot_keys_share) chunk.key_hashes.assign(lines, 0);
  if (config_.annotate_salt) chunk.salt_of_line.assign(lines, -1);
  const size_t readable_end = chunk.readable_end();
  extractor_.begin_block(chunk.text(), lines == 0 ? 0 : chunk.line_starts[lines]);

  for (size_t i = 0; i < lines; ++i) {
    const std::string_view line = chunk.line(i);
    const size_t readable = readable_end - chunk.line_starts[i];
    Extraction extraction = extractor_.extract_in_block(line, readable, chunk.starts_input(i));
    if (extraction.ok && config_.annotate() && !ends_with_brace(line)) {
      extraction = bad_line(BadReason::kInvalidJson, "no closing brace to annotate");
    }
    if (extraction.ok) {
      last_sub_key_ = -1;
      const auto salted = salt_index_.empty() ? salt_index_.end() : salt_index_.find(extraction.key);
      chunk.destinations[i] =
          salted == salt_index_.end()
              ? partitioner_.partition_of(extraction.key)
              : salted_partition(chunk, i, extraction.key, salted->second, readable);
      if (config_.annotate_salt) chunk.salt_of_line[i] = last_sub_key_;
      const uint64_t key_hash = HeavyHitters::key_hash(extraction.key);
      heavy_hitters.add(extraction.key, key_hash);
      if (config_.hot_keys_share) chunk.key_hashes[i] = key_hash;
      if (config_.annotate_key) chunk.keys.append(extraction.key);
    } else if (extraction.reason == BadReason::kMissingKey && config_.missing_key_partition) {
      chunk.destinations[i] = *config_.missing_key_partition;
      ++chunk.missing_key_routed;
      if (config_.annotate_key) chunk.keyless[i] = true;
    } else {
      chunk.destinations[i] = kToBadLine;
      chunk.bad_lines.push_back(BadLine{static_cast<uint32_t>(i), extraction.reason,
                                        extraction.detail});
      if (config_.on_bad == BadLinePolicy::kFail) {
        chunk.stop_at_line = static_cast<uint32_t>(i);
        chunk.destinations.resize(i + 1);
        if (config_.annotate_key) chunk.key_ends[i] = static_cast<uint32_t>(chunk.keys.size());
        break;
      }
    }
    if (config_.annotate_key) chunk.key_ends[i] = static_cast<uint32_t>(chunk.keys.size());
  }
  if (progress_) progress_->events.fetch_add(lines, std::memory_order_relaxed);
  // Round-robin salting is settled in input order by the salt sequencer, which groups after.
  if (!config_.ordered_stdout() && !config_.sequenced_salting()) {
    group_by_partition(chunk, config_.partitions, cursor_);
  }
}

void group_by_partition(Chunk& chunk, uint32_t partitions, std::vector<uint32_t>& cursor) {
  chunk.group_begin.assign(partitions + 1, 0);
  for (uint32_t destination : chunk.destinations) {
    if (destination < partitions) ++chunk.group_begin[destination + 1];
  }
  for (uint32_t p = 0; p < partitions; ++p) chunk.group_begin[p + 1] += chunk.group_begin[p];
  cursor.assign(chunk.group_begin.begin(), chunk.group_begin.end() - 1);
  chunk.order.resize(chunk.group_begin[partitions]);
  const auto count = static_cast<uint32_t>(chunk.destinations.size());
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t destination = chunk.destinations[i];
    if (destination < partitions) chunk.order[cursor[destination]++] = i;
  }
}

}  // namespace keyshard
