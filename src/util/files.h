// Thin, checked wrappers over POSIX file calls: whole writes that retry on EINTR and short
// writes, an owning descriptor, and the open-file limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "util/status.h"

namespace keyshard {

/// Owns a file descriptor; closes it on destruction.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.release()) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  /// Closes now, reporting a failed close (which can mean lost data on some filesystems).
  Status close(const std::string& path);

 private:
  int fd_ = -1;
};

/// Writes all of `data` to `fd`; the error names `path`. On failure `*failed_errno` (when
/// given) receives the errno, so a caller can tell a closed pipe from a full disk.
Status write_all(int fd, std::string_view data, const std::string& path,
                 int* failed_errno = nullptr);

/// For a process about to end at once (async-signal-safe, so a signal handler may call it):
/// no write_all starts any more (one that would waits for the end), and those under way are
/// let finish, for up to `patience_ms` milliseconds, so that an output given whole lines (a
/// pipe) is not left part way through one. Whether every write under way finished.
bool close_writes(int patience_ms);

/// A file as the system knows it: device and inode numbers.
using FileIdentity = std::pair<uint64_t, uint64_t>;

/// The file at `path` (links followed), or nothing when it cannot be reached (errno says why).
std::optional<FileIdentity> identity_of(const std::string& path);

/// The regular file a standard stream (`fd`) is, if it is one (`< FILE`, `> FILE`); with
/// `or_pipe`, also the pipe or socket it is (`| next`, `2>&1 | next`), whose reader takes the
/// bytes in the order they are written. (Never a terminal or another device.)
std::optional<FileIdentity> stream_file(int fd, bool or_pipe = false);

/// The directory part of `path` ("." for a bare name, "/" for a file in the root).
std::string directory_of(const std::string& path);

/// Whether `name` names a file within a directory by itself: not empty, "." or "..", and
/// without '/' or a NUL byte.
bool is_plain_file_name(std::string_view name);

/// Reads up to `size` bytes, retrying on EINTR; returns bytes read, 0 at end, -1 on error.
long read_some(int fd, char* buffer, size_t size);

/// Puts /dev/null in place of standard input, output or error when the caller closed it
/// (`keyshard ... <&-`), so that no file keyshard opens takes its number; remembers which were.
/// It is opened the other way round: reading or writing it fails as on a closed descriptor.
void guard_standard_streams();
/// Whether descriptor 0, 1 or 2 was closed when keyshard started.
bool standard_stream_was_closed(int fd);

/// read_some() for an input of the run: once SIGINT, SIGTERM or SIGHUP is caught (see
/// interrupt.h) it returns -1 with errno EINTR instead of waiting for more of a quiet pipe,
/// however close before the read the signal came.
long read_input(int fd, char* buffer, size_t size);

/// Reads `size` bytes of `fd` from `offset` (pread, again after EINTR and short reads): how many
/// it read, fewer only where the file ends first, or -1 with errno set.
long read_at(int fd, char* buffer, size_t size, uint64_t offset);

/// Raises the soft open-file limit to the hard limit; returns the limit now in force.
uint64_t raise_open_file_limit();

/// How many file descriptors this process had open when guard_standard_streams() ran, first
/// thing in main (counted in /proc/self/fd; 3 if it did not run, or /proc cannot be read): the
/// descriptors keyshard was started with.
uint64_t open_files_at_start();

/// The message of errno `error_number`, e.g. "No such file or directory".
std::string errno_text(int error_number);

/// `path`'s name relative to `dir` when it lies inside it (as spelt: both made absolute from the
/// working directory, "." and ".." taken away, symbolic links not followed); else nothing.
std::optional<std::string> name_inside(const std::string& dir, const std::string& path);

}  // namespace keyshard
