// A caught SIGINT, SIGTERM or SIGHUP stops the reading of an input that has nothing to give,
// even when it came before the read began (a quiet pipe would otherwise hold the run until its
// next byte). Each case runs in a child process: the signal state is process-wide.
#include "util/interrupt.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "../in_child.h"
#include "util/files.h"

namespace keyshard {

TEST_CASE("a signal caught before the read stops the read of a quiet pipe") {
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    CAPTURE(signal_number);
    const int status = in_child([signal_number] {
      int quiet[2];
      if (::pipe(quiet) != 0) return 10;  // the write end stays open: reads would wait
      // (As the test may run under nohup, or as a background job: a signal ignored from the
      // start is not caught; the test after this one checks that.)
      std::signal(signal_number, SIG_DFL);
      catch_interrupts();
      if (::raise(signal_number) != 0) return 11;  // handled now, before any read
      if (interrupt_signal() != signal_number) return 12;
      char byte = 0;
      const long got = read_input(quiet[0], &byte, 1);
      return got == -1 && errno == EINTR ? 0 : 13;
    });
    CHECK(status == 0);  // 128 + SIGALRM (142): the read waited for the pipe
  }
}

TEST_CASE("a signal keyshard was started ignoring stays ignored") {
  // nohup, or a background job of a script: SIGHUP (or SIGINT) is not keyshard's to catch.
  for (const int signal_number : {SIGINT, SIGHUP}) {
    CAPTURE(signal_number);
    const int status = in_child([signal_number] {
      if (std::signal(signal_number, SIG_IGN) == SIG_ERR) return 10;
      catch_interrupts();
      struct sigaction now {};
      if (::sigaction(signal_number, nullptr, &now) != 0 || now.sa_handler != SIG_IGN) return 11;
      if (::raise(signal_number) != 0) return 12;
      return interrupt_signal() == 0 ? 0 : 13;
    });
    CHECK(status == 0);
  }
}

TEST_CASE("a second signal of another kind ends the process, unless it comes at once") {
  // SIGTERM (from timeout or systemd), then ^C: the ^C ends keyshard as it would uncaught.
  // One within half a second is the first delivered again, and only recorded.
  const int late = in_child([] {
    std::signal(SIGTERM, SIG_DFL);
    std::signal(SIGINT, SIG_DFL);
    catch_interrupts();
    if (::raise(SIGTERM) != 0) return 10;
    const timespec pause{0, 600'000'000};
    ::nanosleep(&pause, nullptr);
    (void)::raise(SIGINT);  // default action: the child ends here
    return 11;
  });
  CHECK(late == 128 + SIGINT);
  const int soon = in_child([] {
    std::signal(SIGHUP, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    catch_interrupts();
    if (::raise(SIGHUP) != 0) return 10;
    if (::raise(SIGTERM) != 0) return 11;
    return interrupt_signal() == SIGHUP ? 0 : 12;  // the first one is the run's
  });
  CHECK(soon == 0);
}

TEST_CASE("messages name each signal caught") {
  CHECK(interrupt_signal_name(SIGINT) == "SIGINT (^C)");
  CHECK(interrupt_signal_name(SIGTERM) == "SIGTERM");
  CHECK(interrupt_signal_name(SIGHUP) == "SIGHUP (the terminal or session closed)");
}

TEST_CASE("without a signal, an input is read as it comes") {
  const int status = in_child([] {
    int pipe_ends[2];
    if (::pipe(pipe_ends) != 0) return 10;
    catch_interrupts();
    if (::write(pipe_ends[1], "ab", 2) != 2) return 11;
    char bytes[4] = {};
    if (read_input(pipe_ends[0], bytes, sizeof bytes) != 2 || bytes[1] != 'b') return 12;
    ::close(pipe_ends[1]);
    return read_input(pipe_ends[0], bytes, sizeof bytes) == 0 ? 0 : 13;  // the end
  });
  CHECK(status == 0);
}

}  // namespace keyshard
