// A sink that feeds a child process (`--exec CMD`): the events go to its stdin, in order, and a
// full pipe blocks the owner, so a slow child slows the run instead of filling memory. How the
// child ended decides whether the run succeeded.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "sinks/child_process.h"
#include "sinks/sink.h"

namespace keyshard {

class ExecSink final : public Sink {
 public:
  /// `label` names the child in messages ("partition 3"); with `allow_early_exit`, a child that
  /// exits with status 0 before its input ends is not an error (the rest of its input is dropped).
  ExecSink(std::string label, std::string command, pid_t pid, FileDescriptor stdin_writer,
           bool allow_early_exit);
  ~ExecSink() override;

  Status write(std::string_view block) override;
  /// Waits until the child has read everything written to it so far (or ended without doing
  /// so: an error unless early exits are allowed); its stdin stays open.
  Status wait_taken() override;
  /// Waits until the child has read all its input (or exited without doing so: an error unless
  /// early exits are allowed), then closes its stdin.
  Status end_input() override;
  /// Ends its input (end_input(), if not done yet), then waits for the child to exit.
  Status finish() override;
  const std::string& name() const override { return label_; }
  /// A child that has ended with a non-zero status or by a signal: its failure, now. One that
  /// exited with status 0 is judged as before, by the next write or at the end, as whether it
  /// read all its input depends on input still to come.
  Status check_while_quiet() override;

 private:
  int wait_for_child();
  Status wait_until_read();
  // Whether the child has exited, or does within `limit_ns` nanoseconds (not reaped).
  bool exits_within(long limit_ns) const;
  Status ended_early();
  Status failed(int wait_status) const;

  std::string label_;
  std::string command_;
  pid_t pid_;
  FileDescriptor stdin_writer_;
  bool allow_early_exit_;
  bool discarding_ = false;  // the child left early and that is allowed
  bool input_ended_ = false;  // end_input() was called; `read_` says how the input was read
  Status read_;
  Status closed_early_;  // the child closed its input early and goes on (said once)
  bool waited_ = false;
  int wait_status_ = 0;
};

}  // namespace keyshard
