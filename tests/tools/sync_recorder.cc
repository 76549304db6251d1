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
// For the direct writes of --commit sync: with $SYNC_SLOW_DIRECT_MS set, each pwrite to a
// descriptor opened with O_DIRECT first sleeps that long, and is recorded once made
// ("direct-write PATH OFFSET SIZE"); with $SYNC_RECORD_SIZES set, each fsync of a regular file
// is followed by "fsync-size PATH SIZE" (the size it made durable); with $SYNC_KEEP_CHECKPOINTS
// set, each checkpoint renamed into place is copied to $SYNC_LOG.checkpoint-N, recorded as
// "checkpoint-copy FILE". With $SYNC_RECORD_CACHED set, each write() to a regular file whose
// path holds "/part-" is recorded once made, as "cached-write PATH OFFSET SIZE": those went
// through the page cache. With $SYNC_RECORD_UNLINKS set, each file removed is recorded as
// "unlink PATH" (the path as given).
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
#include <thread>
#include <chrono>

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
  struct stat info {};
  if (result == 0 && std::getenv("SYNC_RECORD_SIZES") != nullptr && ::fstat(fd, &info) == 0 &&
      S_ISREG(info.st_mode)) {
    record("fsync-size " + path_of(fd) + " " + std::to_string(info.st_size));
  }
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

int unlink(const char* path) {
  static auto next = real<int (*)(const char*)>("unlink");
  const int result = next(path);
  if (result == 0 && std::getenv("SYNC_RECORD_UNLINKS") != nullptr) {
    record(std::string("unlink ") + path);
  }
  return result;
}

int rename(const char* from, const char* to) {
  static auto next = real<int (*)(const char*, const char*)>("rename");
  const int result = next(from, to);
  if (result == 0) record(std::string("rename ") + from + " " + to);
  const std::string target = to;
  const std::string checkpoint = "/.keyshard/checkpoint.json";
  const char* log = std::getenv("SYNC_LOG");
  if (result == 0 && log != nullptr && std::getenv("SYNC_KEEP_CHECKPOINTS") != nullptr &&
      target.size() >= checkpoint.size() &&
      target.compare(target.size() - checkpoint.size(), checkpoint.size(), checkpoint) == 0) {
    static int copies = 0;
    const std::string copy = std::string(log) + ".checkpoint-" + std::to_string(++copies);
    std::FILE* in = std::fopen(to, "rb");
    std::FILE* out = std::fopen(copy.c_str(), "wb");
    if (in != nullptr && out != nullptr) {
      char buffer[65536];
      size_t got = 0;
      while ((got = std::fread(buffer, 1, sizeof buffer, in)) > 0) std::fwrite(buffer, 1, got, out);
    }
    if (in != nullptr) std::fclose(in);
    if (out != nullptr) std::fclose(out);
    record("checkpoint-copy " + copy);
  }
  return result;
}

ssize_t pwrite(int fd, const void* data, size_t size, off_t offset) {
  // (With _FILE_OFFSET_BITS=64 this defines pwrite64, the name keyshard then calls.)
#ifdef __USE_FILE_OFFSET64
  static auto next = real<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite64");
#else
  static auto next = real<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite");
#endif
  const char* slow = std::getenv("SYNC_SLOW_DIRECT_MS");
  const int flags = ::fcntl(fd, F_GETFL);
  const bool direct = slow != nullptr && flags >= 0 && (flags & O_DIRECT) != 0;
  if (direct) std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(slow)));
  const ssize_t result = next(fd, data, size, offset);
  if (direct && result >= 0) {
    record("direct-write " + path_of(fd) + " " + std::to_string(offset) + " " +
           std::to_string(result));
  }
  return result;
}

ssize_t write(int fd, const void* data, size_t size) {
  static auto next = real<ssize_t (*)(int, const void*, size_t)>("write");
  thread_local bool recording = false;  // (record() itself writes)
  struct stat info {};
  const bool watched = !recording && std::getenv("SYNC_RECORD_CACHED") != nullptr &&
                       ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) &&
                       path_of(fd).find("/part-") != std::string::npos;
  const off_t offset = watched ? ::lseek(fd, 0, SEEK_CUR) : 0;
  const ssize_t result = next(fd, data, size);
  if (watched && result >= 0) {
    recording = true;
    record("cached-write " + path_of(fd) + " " + std::to_string(offset) + " " +
           std::to_string(result));
    recording = false;
  }
  return result;
}

}  // extern "C"
