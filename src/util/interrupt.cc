#include "util/interrupt.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>

namespace keyshard {
namespace {

// Read by the reader thread while any thread may run the handler: an atomic, not a volatile
// sig_atomic_t (which is only safe within one thread). Lock-free, so safe in a handler.
std::atomic<int> received{0};
static_assert(std::atomic<int>::is_always_lock_free);

// The handler also writes a byte here, so that a reader waiting in poll() on its input and the
// read end wakes up even when the signal came just before it began to wait.
int wakeup[2] = {-1, -1};

void on_signal(int signal_number) {
  const int saved_errno = errno;  // the interrupted code may be about to read it
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
  action.sa_flags = SA_RESETHAND;  // the second ^C is not caught
  for (const int signal_number : {SIGINT, SIGTERM}) {
    // A signal keyshard was started ignoring (a background job of a script, nohup) stays
    // ignored, for keyshard and for its --exec children.
    struct sigaction before {};
    if (sigaction(signal_number, nullptr, &before) == 0 && before.sa_handler == SIG_IGN) continue;
    sigaction(signal_number, &action, nullptr);
  }
}

int interrupt_signal() { return received.load(std::memory_order_relaxed); }

int interrupt_wakeup_fd() { return wakeup[0]; }

}  // namespace keyshard
