// The effective options of a split, as a checkpoint records them: resume rebuilds the run from
// them, and an --incremental run checks that it was started the same way as the last one.
#pragma once

#include <string>
#include <string_view>

#include "checkpoint/checkpoint.h"
#include "cli/options.h"
#include "pipeline/run_config.h"
#include "util/status.h"

namespace keyshard {

/// A JSON object with every option that shapes the outputs (not the inputs, nor reporting).
std::string record_options(const SplitOptions& options);

/// Reads back what record_options wrote; unknown or ill-typed members are refused.
Status restore_options(std::string_view json, const std::string& where, SplitOptions& options);

/// Refuses a checkpoint whose shape does not fit the run its options describe (a hand-edited
/// or foreign file that passed its checksum): partitions, outputs, --exec, salting.
Status check_checkpoint_fits(const Checkpoint& checkpoint, const RunConfig& config,
                             const std::string& where);

/// The first recorded option whose value differs between `a` and `b`, as "--name: x vs y";
/// empty when they agree.
std::string first_difference(const SplitOptions& a, const SplitOptions& b);

}  // namespace keyshard
