// The end-of-run summary: a short human report for stderr and the same facts as JSON for
// DIR/keyshard-summary.json. Counts reconcile: lines read = written + dead-lettered + skipped.
#pragma once

#include <string>

#include "insight/run_stats.h"
#include "pipeline/run_config.h"

namespace keyshard {

/// The report printed on stderr at the end of a run (unless -q).
std::string format_summary_text(const RunStats& stats, const RunConfig& config);

/// The JSON document written to keyshard-summary.json (ends with '\n').
std::string format_summary_json(const RunStats& stats, const RunConfig& config);

}  // namespace keyshard
