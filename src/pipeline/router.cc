#include "pipeline/router.h"

#include "input/line_index.h"


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

Router::Router(const RunConfig& config)
    : config_(config), extractor_(config.keys), partitioner_(config.hash, config.partitions) {}

void Router::route(Chunk& chunk) {
  index_lines(chunk.data.get(), chunk.size, chunk.line_starts);
  const size_t lines = chunk.line_count();
  chunk.destinations.resize(lines);
  chunk.bad_lines.clear();
  chunk.stop_at_line = UINT32_MAX;
  chunk.missing_key_routed = 0;
  chunk.keys.clear();
  if (config_.annotate_key) chunk.key_ends.resize(lines);
  const size_t readable_end = chunk.capacity + kLinePadding;

  for (size_t i = 0; i < lines; ++i) {
    const std::string_view line = chunk.line(i);
    const size_t readable = readable_end - chunk.line_starts[i];
    Extraction extraction = extractor_.extract(line, readable);
    if (extraction.ok && config_.annotate() && !ends_with_brace(line)) {
      extraction = bad_line(BadReason::kInvalidJson, "no closing brace to annotate");
    }
    if (extraction.ok) {
      chunk.destinations[i] = partitioner_.partition_of(extraction.key);
      heavy_hitters_.add(extraction.key, HeavyHitters::key_hash(extraction.key));
      if (config_.annotate_key) chunk.keys.append(extraction.key);
    } else if (extraction.reason == BadReason::kMissingKey && config_.missing_key_partition) {
      chunk.destinations[i] = *config_.missing_key_partition;
      ++chunk.missing_key_routed;
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
  if (!config_.ordered_stdout()) group_by_partition(chunk);
}

void Router::group_by_partition(Chunk& chunk) {
  const uint32_t partitions = config_.partitions;
  chunk.group_begin.assign(partitions + 1, 0);
  for (uint32_t destination : chunk.destinations) {
    if (destination != kToBadLine) ++chunk.group_begin[destination + 1];
  }
  for (uint32_t p = 0; p < partitions; ++p) chunk.group_begin[p + 1] += chunk.group_begin[p];
  cursor_.assign(chunk.group_begin.begin(), chunk.group_begin.end() - 1);
  chunk.order.resize(chunk.group_begin[partitions]);
  const auto count = static_cast<uint32_t>(chunk.destinations.size());
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t destination = chunk.destinations[i];
    if (destination != kToBadLine) chunk.order[cursor_[destination]++] = i;
  }
}

}  // namespace keyshard
