// A checkpoint: a consistent cut of a run. An input position at a line boundary and, for every
// output, the exact size that holds the results of everything before that position and nothing
// after it, with every counter needed to continue identically. Written to
// DIR/.keyshard/checkpoint.json by checkpoint_store; its text form is checkpoint_codec's.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "input/input_position.h"
#include "insight/run_stats.h"

namespace keyshard {

inline constexpr uint32_t kCheckpointVersion = 1;


/// The committed state of one output file.
struct OutputState {
  std::string file;   // name within DIR, or the --dead-letter path
  uint64_t size = 0;  // bytes in the file
  uint64_t lines = 0;
  uint64_t chain = 0;   // see ContentHash
  uint64_t digest = 0;  // content hash of the first `size` bytes
};

/// The state of --salt and --hot-keys auto, which depends on every event before the cut.
struct SaltState {
  std::vector<uint64_t> dealt;  // per --salt entry: events dealt so far
  std::vector<HotKeyDecision> decisions;
  std::vector<uint64_t> automatic_dealt;  // per decision
  std::vector<std::pair<uint64_t, uint64_t>> shares;  // the share sketch: key hash -> count
  uint64_t shares_total = 0;
};

struct Checkpoint {
  uint32_t version = kCheckpointVersion;
  std::string options;     // the effective options, a JSON object (see recorded_options)
  bool complete = false;   // the run reached the end of its inputs
  bool incremental = false;
  bool exec = false;       // outputs are --exec children's: no sizes, at-least-once on resume
  bool exec_settled = false;  // --exec: written at the run's orderly end (no child is fed
                              // after it), so each child's output ends where the child ended it
  std::string working_directory;  // where the run started: its relative paths are from there
  int64_t inputs_seen_ns = 0;     // when the run looked at its inputs (file-time clock, ns since
                                  // the epoch); 0 in checkpoints that do not record it
  std::vector<InputPosition> inputs;  // in order; inputs before `current` are finished
  uint32_t current = 0;
  uint32_t carried = 0;  // --incremental: the first inputs were only carried over, not read
  std::vector<OutputState> outputs;   // one per partition (empty with --exec)
  std::optional<OutputState> dead_letter;
  RunStats stats;          // counters and heavy-hitter summary at the cut (not the timings)
  SaltState salt;
  // --incremental: the counters when the run began (those of the last finished run; zero for a
  // first run), which its summary subtracts, also once it is resumed or continued after an
  // interruption; none without --incremental, or in an older checkpoint. Its hot-key decisions
  // are the first of salt.decisions, with their events then.
  std::optional<RunStats> run_base;
};

}  // namespace keyshard
