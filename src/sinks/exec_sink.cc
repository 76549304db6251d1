#include "sinks/exec_sink.h"

#include <sys/wait.h>

#include <cerrno>

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

Status ExecSink::ended_early() {
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

Status ExecSink::finish() {
  stdin_writer_ = FileDescriptor();  // EOF for the child
  const int status = wait_for_child();
  return wait_status_ok(status) ? Status{} : failed(status);
}

}  // namespace keyshard
