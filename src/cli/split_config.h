// Validation: turns the options of `split` into a RunConfig with every default resolved and
// every conflict refused with a message that says what to type instead.
#pragma once

#include "cli/options.h"
#include "pipeline/run_config.h"
#include "util/status.h"

namespace keyshard {

/// The refusal of --progress given with --no-progress.
inline constexpr const char* kProgressConflict =
    "--progress and --no-progress say opposite things: give one";

Status make_run_config(const SplitOptions& options, RunConfig& config);

/// For a run that starts reading its inputs (not a resumed one, which may have read standard
/// input already): refuses (status 2) standard input named twice, or named and closed; warns
/// of a file named twice (but by --incremental, which reads it once and says so).
Status check_inputs(const RunConfig& config);

/// The input, key and partitioning part of make_run_config, for the commands that read inputs
/// and write no partitions (stats, plan).
Status make_input_config(const SplitOptions& options, RunConfig& config);

}  // namespace keyshard
