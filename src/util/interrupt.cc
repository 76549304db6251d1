#include "util/interrupt.h"

#include <csignal>

namespace keyshard {
namespace {

volatile std::sig_atomic_t received = 0;

void on_signal(int signal_number) { received = signal_number; }

}  // namespace

void catch_interrupts() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // the second ^C is not caught
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int interrupt_signal() { return received; }

}  // namespace keyshard
