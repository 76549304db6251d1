#include "util/durable_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <system_error>
#include <thread>

#include "util/files.h"

namespace keyshard {
namespace {

// Each fsync waits for its file's pages and for the disk to flush its cache, and fsyncs running
// at the same time share those waits: many files are synced from up to kMostThreads threads at
// once. (A run into 1,024 partitions took as long as with syncfs() when its fsyncs came from 32
// threads, a sixth longer from 8, and two fifths longer from 1.)
constexpr size_t kFilesPerThread = 16;
constexpr size_t kMostThreads = 32;

enum class Kind { kFile, kDirectory, kOther };

// Opens `path` to sync it, without blocking on a FIFO. A file keyshard writes but may not read
// (made with mode 0200, say) is opened for writing instead.
FileDescriptor open_to_sync(const std::string& path) {
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid() && errno == EACCES) {
    fd = FileDescriptor(::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC));
  }
  return fd;
}

Kind kind_of(int fd) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return Kind::kOther;
  if (S_ISREG(info.st_mode)) return Kind::kFile;
  return S_ISDIR(info.st_mode) ? Kind::kDirectory : Kind::kOther;
}

Status cannot_open(const std::string& path) {
  return Status::error("cannot open to sync: " + errno_text(errno), path);
}

// Only starts the writeback; an error shows up at the fsync.
void start_writeback(int fd) { (void)::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE); }

// fsync of a directory; true also where its filesystem cannot fsync one at all (some FUSE and
// network filesystems: EINVAL, EBADF), whose entries are then as durable as it makes them.
bool fsync_directory(int fd) {
  return ::fsync(fd) == 0 || errno == EINVAL || errno == EBADF;
}

Status sync_one(const std::string& path) {
  FileDescriptor fd = open_to_sync(path);
  if (!fd.valid()) return cannot_open(path);
  switch (kind_of(fd.get())) {
    case Kind::kOther: return {};
    case Kind::kDirectory:
      if (fsync_directory(fd.get())) return {};
      break;
    case Kind::kFile:
      if (::fsync(fd.get()) == 0) return {};
      break;
  }
  return Status::error("fsync failed: " + errno_text(errno), path);
}

}  // namespace

Status sync_directory(const std::string& dir) {
  FileDescriptor fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid() || !fsync_directory(fd.get())) {
    return Status::error("cannot sync the directory: " + errno_text(errno), dir);
  }
  return {};
}

Status make_durable(const std::vector<std::string>& paths) {
  // Two passes, each opening the files anew, so that thousands of partitions never hold twice
  // their descriptors at once. The first only starts the writeback of each file.
  for (const std::string& path : paths) {
    FileDescriptor fd = open_to_sync(path);
    if (!fd.valid()) return cannot_open(path);
    if (kind_of(fd.get()) == Kind::kFile) start_writeback(fd.get());
  }
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  Status first;  // the failure of the first path that failed
  size_t first_index = paths.size();
  auto sync_some = [&] {
    for (size_t i; !failed.load() && (i = next.fetch_add(1)) < paths.size();) {
      Status status = sync_one(paths[i]);
      if (status) continue;
      std::lock_guard lock(mutex);
      if (i < first_index) {
        first = std::move(status);
        first_index = i;
      }
      failed = true;
    }
  };
  const size_t threads =
      std::clamp<size_t>((paths.size() + kFilesPerThread - 1) / kFilesPerThread, 1, kMostThreads);
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < threads; ++t) {
    try {
      helpers.emplace_back(sync_some);
    } catch (const std::system_error&) {
      break;  // (no thread to be had: this one does the rest)
    }
  }
  sync_some();
  for (std::thread& helper : helpers) helper.join();
  return first;
}

}  // namespace keyshard
