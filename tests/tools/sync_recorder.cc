// A preloaded library for tests/cli/durable_outputs.sh: records each fsync, fdatasync, syncfs
// and rename keyshard makes, one line each ("fsync PATH", "rename FROM TO"...), in the order the
// calls return, in the file named by $SYNC_LOG, and then makes the real call. The test reads the
// log to check what was made durable before each checkpoint.
// It can also make fsync fail, as filesystems do: with $SYNC_FAIL_DIRECTORIES set to EINVAL or
// EBADF, every fsync of a directory fails with that error (some FUSE and network filesystems);
// with $SYNC_FAIL_FILE set, every fsync of a file whose path ends with it fails with EIO (a disk
// that lost the writes). Those are recorded as "fsync-failed PATH ERROR"; calls that fail on
// their own are not recorded. With $SYNC_SIGNAL_FILE set, the first fsync of a file whose path
// ends with it first sends the process SIGTERM: a signal that comes during a sync.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

// The path behind a descriptor, as /proc shows it.
std::string path_of(int fd) {
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char path[PATH_MAX];
  const ssize_t size = ::readlink(link, path, sizeof path);
  return size > 0 ? std::string(path, static_cast<size_t>(size)) : "?";
}

// One line, written with a single append so that threads' lines never interleave.
void record(const std::string& line) {
  const char* log = std::getenv("SYNC_LOG");
  if (log == nullptr) return;
  const int saved = errno;
  const int fd = ::open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd >= 0) {
    const std::string text = line + "\n";
    (void)!::write(fd, text.data(), text.size());
    ::close(fd);
  }
  errno = saved;
}

template <class Function>
Function real(const char* name) {
  return reinterpret_cast<Function>(::dlsym(RTLD_NEXT, name));
}

// The error an fsync of `fd` is to fail with (and its name), or 0 to make the real call. A
// value the test did not mean stops the program, so that a typo cannot pass for a test.
int injected_failure(int fd, const char*& name) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return 0;
  if (S_ISDIR(info.st_mode)) {
    const char* error = std::getenv("SYNC_FAIL_DIRECTORIES");
    if (error == nullptr || *error == '\0') return 0;
    name = error;
    if (std::strcmp(error, "EINVAL") == 0) return EINVAL;
    if (std::strcmp(error, "EBADF") == 0) return EBADF;
    std::fprintf(stderr, "sync_recorder: SYNC_FAIL_DIRECTORIES=%s: use EINVAL or EBADF\n", error);
    std::abort();
  }
  const char* suffix = std::getenv("SYNC_FAIL_FILE");
  if (suffix == nullptr || *suffix == '\0') return 0;
  const std::string path = path_of(fd), end = suffix;
  name = "EIO";
  return path.size() >= end.size() && path.compare(path.size() - end.size(), end.size(), end) == 0
             ? EIO
             : 0;
}

bool ends_with_env(int fd, const char* variable) {
  const char* suffix = std::getenv(variable);
  if (suffix == nullptr || *suffix == '\0') return false;
  const std::string path = path_of(fd), end = suffix;
  return path.size() >= end.size() && path.compare(path.size() - end.size(), end.size(), end) == 0;
}

}  // namespace

extern "C" {

int fsync(int fd) {
  static auto next = real<int (*)(int)>("fsync");
  static bool signalled = false;
  if (!signalled && ends_with_env(fd, "SYNC_SIGNAL_FILE")) {
    signalled = true;
    record("signal SIGTERM at fsync " + path_of(fd));
    ::kill(::getpid(), SIGTERM);
  }
  const char* name = nullptr;
  if (const int error = injected_failure(fd, name); error != 0) {
    record("fsync-failed " + path_of(fd) + " " + name);
    errno = error;
    return -1;
  }
  const int result = next(fd);
  if (result == 0) record("fsync " + path_of(fd));
  return result;
}

int fdatasync(int fd) {
  static auto next = real<int (*)(int)>("fdatasync");
  const int result = next(fd);
  if (result == 0) record("fdatasync " + path_of(fd));
  return result;
}

int syncfs(int fd) {
  static auto next = real<int (*)(int)>("syncfs");
  const int result = next(fd);
  if (result == 0) record("syncfs " + path_of(fd));
  return result;
}

int rename(const char* from, const char* to) {
  static auto next = real<int (*)(const char*, const char*)>("rename");
  const int result = next(from, to);
  if (result == 0) record(std::string("rename ") + from + " " + to);
  return result;
}

}  // extern "C"
