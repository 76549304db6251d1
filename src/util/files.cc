#include "util/files.h"

#include "util/interrupt.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace keyshard {

std::optional<FileIdentity> identity_of(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  return FileIdentity{static_cast<uint64_t>(info.st_dev), static_cast<uint64_t>(info.st_ino)};
}

std::optional<FileIdentity> stream_file(int fd, bool or_pipe) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return std::nullopt;
  const bool pipe = S_ISFIFO(info.st_mode) || S_ISSOCK(info.st_mode);
  if (!S_ISREG(info.st_mode) && !(or_pipe && pipe)) return std::nullopt;
  return FileIdentity{static_cast<uint64_t>(info.st_dev), static_cast<uint64_t>(info.st_ino)};
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool is_plain_file_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find_first_of(std::string_view("/\0", 2)) == std::string_view::npos;
}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

Status FileDescriptor::close(const std::string& path) {
  if (fd_ < 0) return {};
  const int fd = release();
  if (::close(fd) != 0 && errno != EINTR) {
    return Status::error("cannot close: " + errno_text(errno), path);
  }
  return {};
}

namespace {

// The writes under way, and whether close_writes() ended them. A write counts itself in first
// and then looks at `writes_closed`, and close_writes() sets it first and then counts: so
// either it sees the write under way, or the write sees it closed (both sequentially
// consistent). Lock-free, so safe in a signal handler.
std::atomic<int> writes_under_way{0};
std::atomic<bool> writes_closed{false};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);

class WriteUnderWay {
 public:
  WriteUnderWay() {
    writes_under_way.fetch_add(1);
    if (writes_closed.load()) {
      writes_under_way.fetch_sub(1);
      for (;;) ::pause();  // the process ends meanwhile
    }
  }
  ~WriteUnderWay() { writes_under_way.fetch_sub(1); }
  WriteUnderWay(const WriteUnderWay&) = delete;
  WriteUnderWay& operator=(const WriteUnderWay&) = delete;
};

}  // namespace

bool close_writes(int patience_ms) {
  writes_closed.store(true);
  for (int waited = 0; writes_under_way.load() != 0; ++waited) {
    if (waited >= patience_ms) return false;
    const timespec millisecond{0, 1'000'000};
    ::nanosleep(&millisecond, nullptr);
  }
  return true;
}

Status write_all(int fd, std::string_view data, const std::string& path, int* failed_errno) {
  const WriteUnderWay under_way;  // the whole of `data` is one write to close_writes()
  while (!data.empty()) {
    const ssize_t written = ::write(fd, data.data(), data.size());
    if (written < 0) {
      const int error_number = errno;
      if (error_number == EINTR) continue;
      if (failed_errno) *failed_errno = error_number;
      return Status::error("write failed: " + errno_text(error_number), path);
    }
    data.remove_prefix(static_cast<size_t>(written));
  }
  return {};
}

long read_some(int fd, char* buffer, size_t size) {
  for (;;) {
    const ssize_t got = ::read(fd, buffer, size);
    if (got >= 0 || errno != EINTR) return static_cast<long>(got);
    if (interrupt_signal() != 0) return -1;  // errno is EINTR: the run is being interrupted
  }
}

namespace {
bool closed_at_start[3] = {false, false, false};
uint64_t files_at_start = 3;  // (set once, before any other thread starts)

// How many descriptors this process has open (3, the standard streams, when /proc cannot be
// read).
uint64_t open_file_count() {
  DIR* fds = ::opendir("/proc/self/fd");
  if (fds == nullptr) return 3;
  uint64_t count = 0;
  while (const dirent* entry = ::readdir(fds)) {
    if (entry->d_name[0] != '.') ++count;
  }
  ::closedir(fds);
  return count > 0 ? count - 1 : 0;  // (not the one that reads the list)
}

}  // namespace

void guard_standard_streams() {
  files_at_start = open_file_count();
  for (int fd = 0; fd < 3; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    closed_at_start[fd] = true;
    // open() takes the lowest free number: this one, as the lower ones are open by now. Opened
    // the other way round, so that reading standard input or writing standard output or error
    // still fails (EBADF) as on the closed descriptor: a report or dead letter sent there is
    // an error, not lost in /dev/null.
    const int null = ::open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
    if (null >= 0 && null != fd) ::close(null);
  }
}

uint64_t open_files_at_start() { return files_at_start; }

bool standard_stream_was_closed(int fd) { return fd >= 0 && fd < 3 && closed_at_start[fd]; }

long read_at(int fd, char* buffer, size_t size, uint64_t offset) {
  size_t done = 0;
  while (done < size) {
    const ssize_t got =
        ::pread(fd, buffer + done, size - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return -1;
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return static_cast<long>(done);
}

long read_input(int fd, char* buffer, size_t size) {
  const auto interrupted = [] {
    if (interrupt_signal() == 0) return false;
    errno = EINTR;
    return true;
  };
  if (const int wakeup = interrupt_wakeup_fd(); wakeup >= 0) {
    // Wait for input or a signal: a signal caught after the check below makes the wake-up
    // descriptor readable, so poll() returns at once.
    pollfd waiting[2] = {{fd, POLLIN, 0}, {wakeup, POLLIN, 0}};
    for (;;) {
      if (interrupted()) return -1;
      if (::poll(waiting, 2, -1) >= 0 || errno != EINTR) break;
    }
  }
  if (interrupted()) return -1;
  return read_some(fd, buffer, size);
}

uint64_t raise_open_file_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur == RLIM_INFINITY ? UINT64_MAX : static_cast<uint64_t>(limit.rlim_cur);
}

std::string errno_text(int error_number) { return std::strerror(error_number); }

std::optional<std::string> name_inside(const std::string& dir, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path base = fs::absolute(dir, error).lexically_normal();
  if (error) return std::nullopt;
  const fs::path name = fs::absolute(path, error).lexically_normal().lexically_relative(base);
  if (error || name.empty() || *name.begin() == ".." || name == ".") return std::nullopt;
  return name.string();
}

}  // namespace keyshard
