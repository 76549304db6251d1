#include "pipeline/partition_owner.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <optional>
#include <type_traits>

#include "pipeline/write_alignment.h"
#include "util/files.h"
#include "util/json_text.h"

namespace keyshard {
namespace {

constexpr size_t kOutputBudget = 32u << 20;  // all partition buffers of a run together
constexpr size_t kMinFlush = 16u << 10;
constexpr size_t kMaxFlush = 1u << 20;
// The sink sees a buffer's new bytes ahead (Sink::see_ahead) once there are this many: fewer
// cost more in calls than they save (-n 1024 appends about 1 KiB a partition a chunk).
constexpr size_t kSeeAheadAtLeast = 8u << 10;

// Keeps in `first` the first failure among the statuses of steps that go on past one.
void keep_first(Status& first, Status status) {
  if (first.ok() && !status.ok()) first = std::move(status);
}

std::string bad_line_where(const RunConfig& config, uint32_t input, uint64_t line_number) {
  return fmt::format("{}:{}", config.input_names[input], line_number);
}

}  // namespace

PartitionOwner::PartitionOwner(const RunConfig& config, unsigned index, unsigned count,
                               const Checkpoint* resume, std::vector<uint64_t> input_lines)
    : config_(config),
      index_(index),
      count_(count),
      stats_(config.partitions),
      resume_(resume),
      input_lines_(std::move(input_lines)) {
  input_lines_.resize(std::max<size_t>(input_lines_.size(), config.inputs.size() + 1));
  if (resume) {
    // Each owner continues its own partitions' counters; owner 0 also the run's totals.
    const RunStats& before = resume->stats;
    for (uint32_t p = index_; p < config.partitions && p < before.partition_events.size();
         p += count_) {
      stats_.partition_events[p] = before.partition_events[p];
      stats_.partition_bytes[p] = before.partition_bytes[p];
    }
    if (writes_dead_letters()) {
      stats_.lines_read = before.lines_read;
      stats_.dead_lettered = before.dead_lettered;
      stats_.skipped = before.skipped;
      stats_.missing_key_routed = before.missing_key_routed;
      stats_.bad_by_reason = before.bad_by_reason;
      stats_.salted_events = before.salted_events;
    }
  }
  flush_size_ = config.ordered_stdout() || (config.exec() && config.exec_per_worker)
                    ? kMaxFlush
                    : std::clamp(kOutputBudget / config.partitions, kMinFlush, kMaxFlush);
  write_alignment_ = std::bit_floor(flush_size_);
}

PartitionOwner::Output& PartitionOwner::output_of(uint32_t partition) {
  const bool single = config_.ordered_stdout() || (config_.exec() && config_.exec_per_worker);
  return single ? outputs_[0] : outputs_[partition / count_];
}

template <class Buffered>
Status PartitionOwner::flush(Buffered& output) {
  if (output.buffer.empty()) return {};
  Status status = output.sink->write(output.buffer);
  output.buffer.clear();
  if constexpr (std::is_same_v<Buffered, Output>) output.seen = 0;
  if (output.buffer.capacity() > 4 * flush_size_) {
    // A huge line passed through: give the memory back (a partition's buffer to its slot).
    decltype(output.buffer)(output.buffer.get_allocator()).swap(output.buffer);
    output.buffer.reserve(buffer_bytes());
  }
  if constexpr (std::is_same_v<Buffered, Output>) set_flush_point(output);
  return status;
}

void PartitionOwner::set_flush_point(Output& output) const {
  const std::optional<uint64_t> size = output.sink->file_size();
  output.flush_at = size ? bytes_to_alignment(*size, write_alignment_) : flush_size_;
}

Status PartitionOwner::flush_full(Output& output) {
  const std::optional<uint64_t> size = output.sink->file_size();
  // (After a huge line, everything: flush() gives the buffer's memory back.)
  if (!size || output.buffer.capacity() > 4 * flush_size_) return flush(output);
  output.show_sink();
  size_t part = aligned_write_size(*size, output.buffer.size(), write_alignment_);
  if (part == output.buffer.size()) {
    // Not ending on the alignment: for a file written past the page cache, up to its last page
    // boundary instead (the rest of a page waits), so that its next blocks can go direct too.
    if (const size_t pages = output.sink->direct_prefix(part); pages > 0) part = pages;
  }
  if (output.lent) {  // the spare is about to be filled: the sink must be done with it
    if (Status status = output.sink->settle(); !status) return status;
    output.lent = false;
  }
  bool lent = false;
  Status status = output.sink->write_lent({output.buffer.data(), part}, lent);
  if (!status) {
    output.buffer.clear();  // (the rest of a line whose start did not reach the file: dropped)
    output.seen = 0;
    return status;
  }
  output.took_front(part);
  if (lent) {
    if (output.spare.capacity() < buffer_bytes()) output.spare.reserve(buffer_bytes());
    output.spare.assign(output.buffer, part);
    output.buffer.swap(output.spare);
    output.lent = true;
  } else {
    output.buffer.erase(0, part);
  }
  set_flush_point(output);
  return status;
}

Status PartitionOwner::append_to(Output& output, std::string_view bytes) {
  output.buffer.append(bytes);
  output.buffer.push_back('\n');
  return output.buffer.size() >= output.flush_at ? flush_full(output) : Status{};
}

Status PartitionOwner::append_event(const Chunk& chunk, uint32_t line_index, uint32_t partition) {
  const std::string_view line = chunk.line(line_index);
  const uint64_t offset = stats_.partition_events[partition]++;
  std::string_view text = line;
  if (config_.annotate()) {
    // {"a":1}  ->  {"a":1,"_partition":P,"_offset":O}   (whatever followed '}' is kept)
    const size_t brace = line.rfind('}');
    size_t before = brace;
    while (before > 0 && (line[before - 1] == ' ' || line[before - 1] == '\t' ||
                          line[before - 1] == '\r' || line[before - 1] == '\n')) {
      --before;
    }
    const bool empty_object = before > 0 && line[before - 1] == '{';
    annotated_.assign(line.substr(0, brace));
    auto out = std::back_inserter(annotated_);
    const char* separator = empty_object ? "" : ",";
    if (config_.annotate_partition) {
      fmt::format_to(out, "{}\"_partition\":{}", separator, partition);
      separator = ",";
    }
    if (config_.annotate_offset) {
      fmt::format_to(out, "{}\"_offset\":{}", separator, offset);
      separator = ",";
    }
    if (config_.annotate_salt && chunk.salt_of_line[line_index] >= 0) {
      fmt::format_to(out, "{}\"_salt\":{}", separator, chunk.salt_of_line[line_index]);
      separator = ",";
    }
    if (config_.annotate_key) {
      annotated_ += separator;
      if (chunk.keyless[line_index]) {
        annotated_ += "\"_key\":null";
      } else {
        append_json_bytes_member(annotated_, "_key", chunk.key(line_index));
      }
    }
    annotated_.append(line.substr(brace));
    text = annotated_;
  }
  stats_.partition_bytes[partition] += text.size() + 1;
  return append_to(output_of(partition), text);
}

Status PartitionOwner::append_lines(const Chunk& chunk, uint32_t partition, uint32_t begin,
                                    uint32_t end) {
  // The lines are copied as they stand in the chunk, '\n' included, neighbours in one copy;
  // only an input's last line can lack its '\n', and it is the chunk's last line.
  Output& output = output_of(partition);
  const char* data = chunk.text();
  const uint32_t* starts = chunk.line_starts.data();
  const uint32_t* order = chunk.order.data();
  uint64_t bytes = 0;
  for (uint32_t k = begin; k < end;) {
    uint32_t line = order[k++];
    const uint32_t from = starts[line];
    while (k < end && order[k] == line + 1) line = order[k++];
    const uint32_t to = starts[line + 1];
    if (output.buffer.empty() && to - from >= flush_size_ && data[to - 1] == '\n' &&
        chunk.view == nullptr && output.sink->direct_prefix(to - from) == 0) {
      // A run as long as a whole buffer goes to the sink as it stands. (Not from a file read in
      // place: if it were truncated meanwhile, the write would fail part way, leaving part of a
      // line in the output, where a copy stops keyshard before it writes anything. Nor to a
      // file written past the page cache, whose writes end on a page: see flush_full().)
      if (Status status = output.sink->write({data + from, to - from}); !status) return status;
      set_flush_point(output);
      bytes += to - from;
      continue;
    }
    output.buffer.append(data + from, to - from);
    bytes += to - from;
    if (data[to - 1] != '\n') {
      output.buffer.push_back('\n');
      ++bytes;
    }
    if (output.buffer.size() >= output.flush_at) {
      if (Status status = flush_full(output); !status) return status;
    }
  }
  output.show_sink_after_chunk(kSeeAheadAtLeast);
  stats_.partition_events[partition] += end - begin;
  stats_.partition_bytes[partition] += bytes;
  return {};
}

void PartitionOwner::count_only(const Chunk& chunk) {
  for (uint32_t p = index_; p < config_.partitions; p += count_) {
    const uint32_t begin = chunk.group_begin[p], end = chunk.group_begin[p + 1];
    uint64_t bytes = 0;
    for (uint32_t k = begin; k < end; ++k) {
      bytes += chunk.line(chunk.order[k]).size() + 1;
    }
    stats_.partition_events[p] += end - begin;
    stats_.partition_bytes[p] += bytes;
  }
}

Status PartitionOwner::apply(const Chunk& chunk) {
  if (chunk.input >= input_lines_.size()) input_lines_.resize(chunk.input + 1);
  if (chunk.input_restarted) input_lines_[chunk.input] = 0;
  lines_before_ = input_lines_[chunk.input];
  if (config_.dry_run) {
    count_only(chunk);
  } else if (config_.ordered_stdout()) {
    if (index_ == 0) {
      const auto count = static_cast<uint32_t>(chunk.destinations.size());
      for (uint32_t i = 0; i < count; ++i) {
        const uint32_t destination = chunk.destinations[i];
        if (destination == kToBadLine) continue;
        if (Status status = append_event(chunk, i, destination); !status) return status;
      }
    }
  } else {
    for (uint32_t p = index_; p < config_.partitions; p += count_) {
      const uint32_t begin = chunk.group_begin[p], end = chunk.group_begin[p + 1];
      if (!config_.annotate()) {
        if (Status status = append_lines(chunk, p, begin, end); !status) return status;
        continue;
      }
      for (uint32_t k = begin; k < end; ++k) {
        if (Status status = append_event(chunk, chunk.order[k], p); !status) return status;
      }
      if (begin < end) output_of(p).show_sink_after_chunk(kSeeAheadAtLeast);
    }
  }
  if (writes_dead_letters()) {
    stats_.lines_read += chunk.destinations.size();
    stats_.missing_key_routed += chunk.missing_key_routed;
    stats_.salted_events.resize(chunk.salted_events.size());
    for (size_t i = 0; i < chunk.salted_events.size(); ++i) {
      stats_.salted_events[i] += chunk.salted_events[i];
    }
    if (Status status = handle_bad_lines(chunk); !status) return status;
  }
  if (chunk.stop_at_line != UINT32_MAX) {
    const BadLine& bad = chunk.bad_lines.back();
    std::string reason = fmt::format("{}", bad_reason_name(bad.reason));
    if (!bad.detail.empty()) reason += fmt::format(": {}", bad.detail);
    return Status::error(reason + " (--on-bad fail)",
                         bad_line_where(config_, chunk.input, lines_before_ + bad.line + 1),
                         kExitBadInput);
  }
  input_lines_[chunk.input] += chunk.line_count();
  if (chunk.flush_after) {  // a quiet pipe: nothing waits in a buffer
    for (Output& output : outputs_) {
      if (Status status = flush(output); !status) return status;
      if (Status status = output.sink->check_while_quiet(); !status) return status;
    }
    if (dead_letters_.sink) return flush(dead_letters_);
  }
  return {};
}

Status PartitionOwner::flush_outputs() {
  Status first;
  // The pages written are taken off each buffer once settled (the sink may have borrowed them).
  std::vector<size_t> pages_written(outputs_.size(), 0);
  for (size_t i = 0; i < outputs_.size(); ++i) {
    Output& output = outputs_[i];
    const size_t pages = output.sink->direct_prefix(output.buffer.size());
    if (pages == 0) continue;
    bool lent = false;
    Status status = output.sink->write_lent({output.buffer.data(), pages}, lent);
    if (!status) {
      output.buffer.clear();  // (as in flush_full: what follows a failed write is not written)
      output.seen = 0;
      keep_first(first, std::move(status));
      continue;
    }
    pages_written[i] = pages;
  }
  for (size_t i = 0; i < outputs_.size(); ++i) {
    Output& output = outputs_[i];
    keep_first(first, output.sink->settle());
    output.lent = false;
    output.buffer.erase(0, pages_written[i]);
    output.took_front(pages_written[i]);
  }
  for (Output& output : outputs_) {
    keep_first(first, flush(output));
    set_flush_point(output);  // (flush() leaves an empty buffer's as it was)
  }
  return first;
}

Status PartitionOwner::checkpoint(OwnerCut& cut) {
  if (Status status = check_outputs_in_place(); !status) return status;  // (before and after
  if (Status status = flush_outputs(); !status) return status;           // the writes)
  if (dead_letters_.sink) {
    if (Status status = flush(dead_letters_); !status) return status;
  }
  for (Output& output : outputs_) {
    if (Status status = output.sink->settle(); !status) return status;
    output.lent = false;
  }
  // An --exec child has read every event the cut counts: one that fails with events unread in
  // its pipe fails the run here, before a checkpoint could count them, and resume sends them.
  for (Output& output : outputs_) {
    if (Status status = output.sink->wait_taken(); !status) return status;
  }
  if (Status status = check_outputs_in_place(); !status) return status;
  cut = final_cut();  // made durable by the checkpointer, before it writes the checkpoint
  return {};
}

Status PartitionOwner::check_outputs_in_place() {
  for (Output& output : outputs_) {
    // (Direct writes under way are waited for: until then the file is shorter than written.)
    if (Status status = output.sink->settle(); !status) return status;
    if (Status status = output.sink->check_in_place(); !status) return status;
  }
  return dead_letters_.sink ? dead_letters_.sink->check_in_place() : Status{};
}

OwnerCut PartitionOwner::final_cut() const {
  OwnerCut cut;
  cut.stats = stats_;
  cut.stats.heavy_hitters = HeavyHitters(1);
  if (tracks_outputs()) {
    size_t k = 0;
    for (uint32_t p = index_; p < config_.partitions && k < outputs_.size(); p += count_, ++k) {
      OutputState state = outputs_[k].sink->state();
      state.file = partition_file_name(config_, p);
      state.lines = stats_.partition_events[p];
      cut.outputs.emplace_back(p, std::move(state));
    }
  }
  if (writes_dead_letters()) {
    if (dead_letters_.sink && config_.checkpoints && !config_.dead_letter_path.empty()) {
      OutputState state = dead_letters_.sink->state();
      // Inside DIR: its name there (DIR may move); else the absolute path it was given as.
      state.file = name_inside(config_.output_dir, config_.dead_letter_path)
                       .value_or(config_.dead_letter_path);
      state.lines = stats_.dead_lettered;
      cut.dead_letter = std::move(state);
    }
    cut.input_lines = input_lines_;
  }
  return cut;
}

Status PartitionOwner::finish() {
  Status first = check_outputs_in_place();
  if (first.ok()) keep_first(first, flush_outputs());
  if (dead_letters_.sink) keep_first(first, flush(dead_letters_));
  // With --exec the children's outputs are not keyshard's to sync, only the dead letters.
  // (Without --exec, the pipeline makes every output file durable at once when the owners are
  // done: see make_durable().)
  if (config_.checkpoints && config_.exec() && first.ok()) keep_first(first, sync_dead_letters());
  if (first.ok()) keep_first(first, check_outputs_in_place());  // (before the last checkpoint)
  // Every child's input ends before any is waited for: they wind down side by side.
  for (Output& output : outputs_) (void)output.sink->end_input();  // (finish() says how)
  for (Output& output : outputs_) keep_first(first, output.sink->finish());
  if (dead_letters_.sink) keep_first(first, dead_letters_.sink->finish());
  return first;
}

}  // namespace keyshard
