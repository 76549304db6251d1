// The end of a split or resume: the summary (stderr and DIR/keyshard-summary.json), the
// message of an interrupted run, and the guardrails that turn a finished run into exit 3 or 4.
#pragma once

#include "insight/run_stats.h"
#include "keys/key_extractor.h"
#include "pipeline/pipeline.h"
#include "pipeline/run_config.h"
#include "util/status.h"

namespace keyshard {

/// Warns when lines lacked the key and none had it: a -k spelt otherwise than in the events,
/// most often. `with_key`, `without_key`: lines that had the key, and lines that lacked it.
void warn_if_no_line_has_the_key(const KeySpec& keys, uint64_t with_key, uint64_t without_key);
/// The same, from a run's counters; or, when no line was a JSON object, warns of that, saying
/// where each one's reason is to be read (`config`: a dry run's, or a split's).
void warn_if_no_line_has_the_key(const RunConfig& config, const RunStats& stats);

/// `before`: the counters of the run an --incremental run continued (its summary shows its own).
Status report_run(const RunConfig& config, const RunResult& result, const RunStats* before);

/// A run stopped by SIGINT, SIGTERM or SIGHUP before it began: nothing was read, nor written.
Status interrupted_before_start(int signal_number);

/// The end of a stats or plan whose reading `signal_number` stopped (0: none did) after `lines`
/// lines: its report covers those, as it says; the status is 128 + the signal.
Status interrupted_report(int signal_number, uint64_t lines);

}  // namespace keyshard
