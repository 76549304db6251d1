// A preloaded library for tests/cli/durable_outputs.sh: records each fsync, fdatasync, syncfs
// and rename keyshard makes, one line each ("fsync PATH", "rename FROM TO"...), in the order the
// calls return, in the file named by $SYNC_LOG, and then makes the real call. The test reads the
// log to check what was made durable before each checkpoint.
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
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

}  // namespace

extern "C" {

int fsync(int fd) {
  static auto next = real<int (*)(int)>("fsync");
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
