#include "sinks/exec_sink.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>

#include <algorithm>
#include <cerrno>

#include "util/stderr_lines.h"

namespace keyshard {

ExecSink::ExecSink(std::string label, std::string command, pid_t pid,
                   FileDescriptor stdin_writer, bool allow_early_exit)
    : label_(std::move(label)),
      command_(std::move(command)),
      pid_(pid),
      stdin_writer_(std::move(stdin_writer)),
      allow_early_exit_(allow_early_exit) {}

ExecSink::~ExecSink() {
  stdin_writer_ = FileDescriptor();
  wait_for_child();  // never leave a zombie, even on an error path
}

int ExecSink::wait_for_child() {
  if (waited_) return wait_status_;
  while (::waitpid(pid_, &wait_status_, 0) < 0 && errno == EINTR) {
  }
  waited_ = true;
  return wait_status_;
}

Status ExecSink::failed(int wait_status) const {
  return Status::error("command `" + command_ + "` " + describe_wait_status(wait_status), label_);
}

bool ExecSink::exits_within(long limit_ns) const {
  long waited_ns = 0, pause_ns = 100'000;
  for (;;) {
    // WNOWAIT: looked at, not reaped (wait_for_child() does that).
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
        info.si_pid == pid_) {
      return true;
    }
    if (waited_ns >= limit_ns) return false;
    const timespec pause{0, pause_ns};
    ::nanosleep(&pause, nullptr);
    waited_ns += pause_ns;
    pause_ns = std::min(2 * pause_ns, 50'000'000L);
  }
}

Status ExecSink::ended_early() {
  // Nothing can read the pipe any more. The child has exited, or is about to (it closes its
  // stdin as it ends), or closed its stdin and goes on: then what it left unread is known
  // now, and not when it ends, which may be much later.
  if (!closed_early_.ok()) return closed_early_;  // (said once; the end asks again)
  if (!waited_ && !exits_within(2'000'000'000L)) {
    if (allow_early_exit_) {  // (how it ends is judged at the end, as for every child)
      discarding_ = true;
      return {};
    }
    (void)write_stderr_record("keyshard: " + label_ + ": command `" + command_ +
                              "` closed its input before reading all of it, yet goes on "
                              "running: the run stops, and ends once the command has exited\n");
    closed_early_ = Status::error("command `" + command_ +
                                      "` closed its input before reading all of it "
                                      "(--allow-early-exit permits this)",
                                  label_);
    return closed_early_;
  }
  const int status = wait_for_child();
  if (!wait_status_ok(status)) return failed(status);
  if (allow_early_exit_) {
    discarding_ = true;
    return {};
  }
  return Status::error("command `" + command_ +
                           "` exited before reading all its input (--allow-early-exit permits "
                           "this)",
                       label_);
}

Status ExecSink::write(std::string_view block) {
  if (discarding_) return {};
  int error_number = 0;
  Status status = write_all(stdin_writer_.get(), block, label_, &error_number);
  if (!status && error_number == EPIPE) return ended_early();
  return status;
}

Status ExecSink::wait_until_read() {
  // A child that leaves input in its pipe when nothing can read the pipe any more (it exited,
  // or closed its stdin, and no process it started holds the pipe) did not read all of it,
  // although no write failed: the pipe held the rest, which closing it would drop without a
  // word. While anything can still read, the rest may yet be read: wait (also once the run is
  // interrupted, as it ends in order; a second signal ends keyshard at once).
  const int fd = stdin_writer_.get();
  long pause_ns = 100'000;
  while (!waited_) {  // once it was waited for, how it ended has been judged
    int unread = 0;
    if (::ioctl(fd, FIONREAD, &unread) != 0 || unread == 0) return {};
    pollfd readers{fd, POLLOUT, 0};
    if (::poll(&readers, 1, 0) == 1 && (readers.revents & POLLERR) != 0) {
      // No reader is left, so nothing more can leave the pipe: ask once more, as the last
      // reader may have taken the rest just before it went.
      if (::ioctl(fd, FIONREAD, &unread) != 0 || unread == 0) return {};
      return ended_early();
    }
    const timespec pause{0, pause_ns};
    ::nanosleep(&pause, nullptr);
    pause_ns = std::min(2 * pause_ns, 20'000'000L);
  }
  return {};
}

Status ExecSink::wait_taken() {
  if (input_ended_ || discarding_) return {};
  return wait_until_read();
}

Status ExecSink::check_while_quiet() {
  if (waited_ || discarding_) return {};
  // WNOWAIT: looked at, not reaped, so that a child that exited 0 is still there to be judged.
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid != pid_ || (info.si_code == CLD_EXITED && info.si_status == 0)) {
    return {};
  }
  return failed(wait_for_child());
}

Status ExecSink::end_input() {
  if (input_ended_) return read_;
  read_ = wait_taken();
  input_ended_ = true;
  stdin_writer_ = FileDescriptor();  // EOF for the child, and for anything it started
  return read_;
}

Status ExecSink::finish() {
  const Status read = end_input();
  const int status = wait_for_child();
  if (!read) return read;
  return wait_status_ok(status) ? Status{} : failed(status);
}

}  // namespace keyshard
