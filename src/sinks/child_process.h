// Starting `/bin/sh -c CMD` with its standard streams wired to keyshard, and describing how it
// ended. Every descriptor keyshard holds is close-on-exec, so a child inherits only its own
// three streams: one child can never keep another's input open.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "util/files.h"
#include "util/status.h"

namespace keyshard {

struct ChildStreams {
  FileDescriptor stdin_writer;   // keyshard writes the events here
  FileDescriptor stdout_reader;  // set when the child's stdout is a pipe back to keyshard
  FileDescriptor stderr_reader;  // the child's stderr, always a pipe back to keyshard
};

/// Starts `/bin/sh -c command` with `extra_env` added to the environment. Its stdout goes to
/// `stdout_fd` when that is >= 0 (a file), else to a pipe returned in `streams.stdout_reader`.
/// The child gets a process group of its own, so that a ^C at the terminal reaches keyshard
/// alone, which then ends the run in order (the child sees the end of its input).
Status spawn_shell(const std::string& command,
                   const std::vector<std::pair<std::string, std::string>>& extra_env,
                   int stdout_fd, pid_t& pid, ChildStreams& streams);

/// "exited with status 3", "was killed by signal 9 (Killed)".
std::string describe_wait_status(int status);

/// True when a wait status means success (exit status 0).
bool wait_status_ok(int status);

}  // namespace keyshard
