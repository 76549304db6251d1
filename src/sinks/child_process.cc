#include "sinks/child_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace keyshard {
namespace {

Status make_pipe(FileDescriptor& reader, FileDescriptor& writer) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return Status::error("cannot create a pipe: " + errno_text(errno));
  }
  reader = FileDescriptor(fds[0]);
  writer = FileDescriptor(fds[1]);
  return {};
}

}  // namespace

Status spawn_shell(const std::string& command,
                   const std::vector<std::pair<std::string, std::string>>& extra_env,
                   int stdout_fd, pid_t& pid, ChildStreams& streams, bool own_group) {
  FileDescriptor child_stdin, child_stdout, child_stderr;
  if (Status status = make_pipe(child_stdin, streams.stdin_writer); !status) return status;
  if (stdout_fd < 0) {
    if (Status status = make_pipe(streams.stdout_reader, child_stdout); !status) return status;
    stdout_fd = child_stdout.get();
  }
  if (Status status = make_pipe(streams.stderr_reader, child_stderr); !status) return status;

  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    bool replaced = false;
    for (const auto& [name, value] : extra_env) {
      const size_t length = name.size();
      if (std::strncmp(*entry, name.c_str(), length) == 0 && (*entry)[length] == '=') {
        replaced = true;
      }
    }
    if (!replaced) environment.emplace_back(*entry);
  }
  for (const auto& [name, value] : extra_env) environment.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (std::string& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, child_stdin.get(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, stdout_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, child_stderr.get(), STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // The child gets the default SIGPIPE and SIGXFSZ dispositions back: keyshard ignores them
  // for itself.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGXFSZ);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  short flags = POSIX_SPAWN_SETSIGDEF;
  if (own_group) {
    posix_spawnattr_setpgroup(&attributes, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  posix_spawnattr_setflags(&attributes, flags);

  std::string shell = "/bin/sh", dash_c = "-c", text = command;
  char* argv[] = {shell.data(), dash_c.data(), text.data(), nullptr};
  const int error = posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (error != 0) return Status::error("cannot start /bin/sh: " + errno_text(error));
  return {};  // the child's ends close here, in keyshard, when the FileDescriptors go
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    return "was killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  }
  return "ended with wait status " + std::to_string(status);
}

bool wait_status_ok(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

}  // namespace keyshard
