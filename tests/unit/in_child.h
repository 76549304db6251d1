// Runs part of a unit test in a child process: for what is process-wide (signal state, the
// user the process runs as) and must not leak into the other tests.
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace keyshard {

/// Runs `body` in a child process and returns its exit status (or 128 + the signal that ended
/// it). The child is killed after 5 s, so a call that waits for ever fails the test.
template <typename Body>
int in_child(Body body) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::alarm(5);
    ::_exit(body());
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace keyshard
