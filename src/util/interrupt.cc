#include "util/interrupt.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <ctime>
#include <string>

namespace keyshard {
namespace {

// Read by the reader thread while any thread may run the handler: an atomic, not a volatile
// sig_atomic_t (which is only safe within one thread). Lock-free, so safe in a handler.
std::atomic<int> received{0};
static_assert(std::atomic<int>::is_always_lock_free);

// The handler also writes a byte here, so that a reader waiting in poll() on its input and the
// read end wakes up even when the signal came just before it began to wait.
int wakeup[2] = {-1, -1};

// The same request can arrive twice: timeout(1) signals keyshard, then its process group. A
// repeat this soon after the first is that; a later one, of any kind caught (a ^C after a
// SIGTERM, say), is a second request, and ends keyshard.
constexpr int64_t kRepeatWindowNs = 500'000'000;

constexpr int kCaught[] = {SIGINT, SIGTERM, SIGHUP};

// When the first of them arrived (CLOCK_MONOTONIC, in ns; 0 before). Lock-free, as above.
std::atomic<int64_t> first_arrival{0};
static_assert(std::atomic<int64_t>::is_always_lock_free);

int64_t monotonic_ns() {  // clock_gettime() is async-signal-safe
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec + 1;  // never 0
}

void on_signal(int signal_number) {
  const int saved_errno = errno;  // the interrupted code may be about to read it
  const int64_t now = monotonic_ns();
  int64_t before = 0;
  if (!first_arrival.compare_exchange_strong(before, now, std::memory_order_relaxed)) {
    if (now - before >= kRepeatWindowNs) {
      // A second request: end as if the signal were not caught. It stays blocked until this
      // handler returns, and then takes its default action.
      ::signal(signal_number, SIG_DFL);
      ::raise(signal_number);
    }
    errno = saved_errno;
    return;
  }
  received.store(signal_number, std::memory_order_relaxed);
  if (wakeup[1] >= 0) {
    const char byte = 1;
    [[maybe_unused]] const ssize_t ignored = ::write(wakeup[1], &byte, 1);
  }
  errno = saved_errno;
}

}  // namespace

void catch_interrupts() {
  if (wakeup[0] < 0 && ::pipe2(wakeup, O_CLOEXEC | O_NONBLOCK) != 0) {
    wakeup[0] = wakeup[1] = -1;  // then only a signal during read() itself stops a read
  }
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART (see interrupt.h); a second request is handled above
  for (const int signal_number : kCaught) {
    // A signal keyshard was started ignoring (a background job of a script, nohup) stays
    // ignored, for keyshard and for its --exec children.
    struct sigaction before {};
    if (sigaction(signal_number, nullptr, &before) == 0 && before.sa_handler == SIG_IGN) continue;
    sigaction(signal_number, &action, nullptr);
  }
}

int interrupt_signal() { return received.load(std::memory_order_relaxed); }

int interrupt_wakeup_fd() { return wakeup[0]; }

std::string interrupt_signal_name(int signal_number) {
  switch (signal_number) {
    case SIGINT: return "SIGINT (^C)";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP (the terminal or session closed)";
    default: return "signal " + std::to_string(signal_number);
  }
}

std::string interrupted_report_line(int signal_number) {
  return "interrupted by " + interrupt_signal_name(signal_number) +
         ": the rest of the input was not read\n";
}

}  // namespace keyshard
