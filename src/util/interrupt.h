// SIGINT, SIGTERM and SIGHUP during a checkpointed run: the handler only records the signal;
// the reader sees it, stops taking input, and the run ends with a checkpoint (exit 128 +
// signal). A second signal of any of these kinds, half a second or more after the first, acts
// as if keyshard had not caught it; one sooner is the first delivered twice (timeout(1) does
// that), and is ignored.
#pragma once

#include <string>

namespace keyshard {

/// Installs the handlers (without SA_RESTART, so that a blocking read returns).
void catch_interrupts();

/// The signal received since catch_interrupts(), or 0.
int interrupt_signal();

/// How messages name a caught signal: "SIGINT (^C)", "SIGTERM", "SIGHUP (…)".
std::string interrupt_signal_name(int signal_number);
/// The line a report (stats, plan) gives under its first when the signal stopped its reading.
std::string interrupted_report_line(int signal_number);

/// A descriptor that becomes readable when a signal is received (-1 before catch_interrupts()).
int interrupt_wakeup_fd();

}  // namespace keyshard
