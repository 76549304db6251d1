// The end of a split or resume: the summary (stderr and DIR/keyshard-summary.json), the
// message of an interrupted run, and the guardrails that turn a finished run into exit 3 or 4.
#pragma once

#include "insight/run_stats.h"
#include "pipeline/pipeline.h"
#include "pipeline/run_config.h"
#include "util/status.h"

namespace keyshard {

/// `before`: the counters of the run an --incremental run continued (its summary shows its own).
Status report_run(const RunConfig& config, const RunResult& result, const RunStats* before);

}  // namespace keyshard
