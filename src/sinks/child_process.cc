#include "sinks/child_process.h"

#include <fcntl.h>
#include <signal.h>
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

// In the child, after a failed dup2 or execve: tells keyshard why, and ends.
[[noreturn]] void exec_failed(int error_fd) {
  const int error = errno;
  [[maybe_unused]] const ssize_t ignored = ::write(error_fd, &error, sizeof error);
  ::_exit(127);
}

}  // namespace

Status spawn_shell(const std::string& command,
                   const std::vector<std::pair<std::string, std::string>>& extra_env,
                   int stdout_fd, pid_t& pid, ChildStreams& streams) {
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

  std::string shell = "/bin/sh", dash_c = "-c", text = command;
  char* argv[] = {shell.data(), dash_c.data(), text.data(), nullptr};
  const int targets[] = {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO};
  const int sources[] = {child_stdin.get(), stdout_fd, child_stderr.get()};

  // The child reports a failed execve (its errno) through this pipe, which the execve closes
  // when it works.
  FileDescriptor exec_error_reader, exec_error_writer;
  if (Status status = make_pipe(exec_error_reader, exec_error_writer); !status) return status;
  const int exec_error_fd = exec_error_writer.get();

  // Every signal stays blocked from the fork until the child is set up, so that none runs a
  // keyshard handler in the child. Only async-signal-safe calls follow in the child.
  sigset_t all, before;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &before);
  pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    for (int signal = 1; signal < NSIG; ++signal) {
      struct sigaction action {};
      if (signal == SIGKILL || signal == SIGSTOP || ::sigaction(signal, nullptr, &action) != 0) {
        continue;
      }
      // keyshard's handlers (and its ignoring SIGPIPE and SIGXFSZ) are its own: the child gets
      // the defaults; what keyshard was started ignoring stays ignored.
      const bool ignored = action.sa_handler == SIG_IGN && signal != SIGPIPE && signal != SIGXFSZ;
      const bool stop_signal =
          signal == SIGINT || signal == SIGTERM || signal == SIGHUP || signal == SIGQUIT;
      if (stop_signal) {
        // A ^C sent to keyshard's process group before setpgid above is pending here. It was
        // meant for keyshard, which ends the run in order: ignoring it drops it.
        struct sigaction ignore {};
        ignore.sa_handler = SIG_IGN;
        ::sigaction(signal, &ignore, nullptr);
      }
      struct sigaction reset {};
      reset.sa_handler = ignored ? SIG_IGN : SIG_DFL;
      ::sigaction(signal, &reset, nullptr);
    }
    for (int i = 0; i < 3; ++i) {
      if (sources[i] == targets[i]) {
        ::fcntl(targets[i], F_SETFD, 0);  // keep it open across exec
      } else if (::dup2(sources[i], targets[i]) < 0) {
        exec_failed(exec_error_fd);
      }
    }
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    ::execve("/bin/sh", argv, envp.data());
    exec_failed(exec_error_fd);
  }
  const int error = errno;
  if (pid > 0) ::setpgid(pid, pid);  // as the child does: whichever comes first
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (pid < 0) return Status::error("cannot start /bin/sh: " + errno_text(error));
  exec_error_writer = FileDescriptor();
  int child_error = 0;
  long got = 0;
  do {
    got = ::read(exec_error_reader.get(), &child_error, sizeof child_error);
  } while (got < 0 && errno == EINTR);
  if (got == sizeof child_error) {
    int ignored = 0;
    while (::waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
    }
    pid = -1;
    return Status::error("cannot start /bin/sh: " + errno_text(child_error));
  }
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
