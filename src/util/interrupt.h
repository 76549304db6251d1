// SIGINT and SIGTERM during a checkpointed run: the handler only records the signal; the reader
// sees it, stops taking input, and the run ends with a checkpoint (exit 128 + signal). A second
// signal of the same kind, half a second or more after the first, acts as if keyshard had not
// caught it; one sooner is the first delivered twice (timeout(1) does that), and is ignored.
#pragma once

namespace keyshard {

/// Installs the handlers (without SA_RESTART, so that a blocking read returns).
void catch_interrupts();

/// The signal received since catch_interrupts(), or 0.
int interrupt_signal();

/// A descriptor that becomes readable when a signal is received (-1 before catch_interrupts()).
int interrupt_wakeup_fd();

}  // namespace keyshard
