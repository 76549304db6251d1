// The split pipeline: reader -> routers -> partition owners -> sinks (see HACKING.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "input/chunk_reader.h"
#include "insight/run_stats.h"
#include "pipeline/run_config.h"
#include "util/status.h"

namespace keyshard {

struct RunResult {
  Status status;
  RunStats stats;
  int interrupted = 0;  // the signal that stopped the run
  int interrupted_late = 0;  // one that came once the whole input was read: the run finished
  // With checkpoints, the last cut, for the caller to write once the summary is out (so that a
  // checkpoint marked complete always has its summary beside it).
  std::optional<Checkpoint> last_checkpoint;
  // The files this run created in DIR (not those it found and truncated or appended to).
  std::vector<std::string> created_files;
  bool wrote_checkpoint = false;  // at least one, before the end
  // The run failed on a zstd frame that did not pass its check, and a checkpoint (this run's, or
  // the earlier one it started from) covers lines of that frame, handed on before the damage
  // showed: no run may go on from it.
  bool corrupt_frame_covered = false;
  std::string corrupt_frame_input;  // the input's name, then
  // A fresh run (not a resume, not --incremental): its first checkpoint records the empty start.
  bool fresh = false;
};

/// Where a checkpointed run starts: each input's position, and the checkpoint it continues.
struct RunStart {
  std::vector<InputStart> inputs;    // one per config.inputs entry
  const Checkpoint* resume = nullptr;  // outputs, counters and salting to continue from
  std::string options;               // the effective options, recorded in every checkpoint
  int64_t inputs_seen_ns = 0;        // when the run looked at its inputs, recorded likewise
  std::optional<RunStats> run_base;  // --incremental: see Checkpoint::run_base; recorded likewise
};

/// Runs one split over `config.inputs`. The output directory must already be prepared. With
/// `config.checkpoints`, `start` says where to begin and what to record.
RunResult run_pipeline(const RunConfig& config, const RunStart* start = nullptr);

}  // namespace keyshard
