// The partition-owner stage: owner w of W owns partitions p with p % W == w (with -o -, owner 0
// owns the one ordered stdout stream). It applies every chunk in sequence order, appending its
// partitions' lines to per-partition buffers that reach the sinks in large writes. Only its
// worker thread touches it, so the hot path takes no lock. Owner 0 also writes dead letters.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "input/chunk.h"
#include "insight/run_stats.h"
#include "pipeline/run_config.h"
#include "sinks/exec_collector.h"
#include "sinks/sink.h"
#include "sinks/zstd_sink.h"

namespace keyshard {

class PartitionOwner {
 public:
  PartitionOwner(const RunConfig& config, unsigned index, unsigned count);

  /// Opens the sinks of the partitions this owner writes; with --exec, starts their children,
  /// whose stdout and stderr pipes are handed to `collector`.
  Status open(ExecCollector* collector);
  /// Writes this owner's share of `chunk`. Under --on-bad fail, returns the bad line's error.
  Status apply(const Chunk& chunk);
  /// Flushes every buffer and closes every sink.
  Status finish();

  const RunStats& stats() const { return stats_; }

 private:
  struct Output {
    std::unique_ptr<Sink> sink;
    std::string buffer;
  };

  bool owns(uint32_t partition) const { return partition % count_ == index_; }
  bool writes_dead_letters() const { return index_ == 0; }
  Output& output_of(uint32_t partition);
  Status open_exec_output(const std::string& label, const std::string& file_name,
                          std::vector<std::pair<std::string, std::string>> env,
                          ExecCollector& collector);
  Status append_event(const Chunk& chunk, uint32_t line, uint32_t partition);
  void count_only(const Chunk& chunk);  // stats: the loads, without writing
  Status append_to(Output& output, std::string_view bytes);
  Status flush(Output& output);
  Status handle_bad_lines(const Chunk& chunk);

  const RunConfig& config_;
  unsigned index_;
  unsigned count_;
  size_t flush_size_;
  std::vector<Output> outputs_;      // partition p's is outputs_[p / count_], or the one output
                                     // (-o - without --exec, or --exec-per worker)
  Output dead_letters_;              // owner 0 only
  std::unique_ptr<ZstdContext> zstd_;
  RunStats stats_;
  uint32_t current_input_ = UINT32_MAX;
  uint64_t lines_before_ = 0;        // lines of the current input in earlier chunks
  std::string annotated_;            // scratch for one annotated line
};

}  // namespace keyshard
