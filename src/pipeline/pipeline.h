// The split pipeline: reader -> routers -> partition owners -> sinks (see HACKING.md).
#pragma once

#include "insight/run_stats.h"
#include "pipeline/run_config.h"
#include "util/status.h"

namespace keyshard {

struct RunResult {
  Status status;
  RunStats stats;
};

/// Runs one split over `config.inputs`. The output directory must already be prepared.
RunResult run_pipeline(const RunConfig& config);

}  // namespace keyshard
