// Where bytes come from: a file or stdin, plain or zstd-compressed. Compression is recognised
// by the zstd magic number in the first bytes, never by the file name, so `cat x.zst |` works.
#pragma once

#include <poll.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/files.h"
#include "util/status.h"

namespace keyshard {

class MappedWindow;

class InputSource {
 public:
  virtual ~InputSource() = default;

  /// Reads up to `size` bytes of (decompressed) input into `buffer`; `got` is 0 only at the end.
  /// A source on a pipe returns what has arrived rather than waiting to fill the buffer.
  virtual Status read(char* buffer, size_t size, size_t& got) = 0;

  /// True when the data is decompressed from zstd.
  virtual bool compressed() const = 0;

  /// The name used in messages: the path as given, or "<stdin>".
  const std::string& name() const { return name_; }

  /// A plain regular file can jump to `offset` instead of reading up to it: `head` and `tail`
  /// receive the bytes its fingerprints cover (see InputPosition). False when the source must
  /// be read through instead (a pipe, zstd) or the file is shorter than `offset`.
  virtual bool seek(uint64_t offset, std::string& head, std::string& tail) {
    (void)offset, (void)head, (void)tail;
    return false;
  }

  /// A regular file read in place: a view of its next `size` bytes, mapped into memory (see
  /// mapped_window.h), without moving on; `window` then holds the mapping they lie in. Empty
  /// when the source cannot: not a regular file, one some program has open for writing, or
  /// fewer than `size` bytes left of the size it had when opened (read() reads the rest).
  virtual std::string_view view(size_t size, std::shared_ptr<const MappedWindow>& window) {
    (void)size, (void)window;
    return {};
  }
  /// Moves on by `size` bytes (viewed), as a read() of them would.
  virtual void skip(size_t size) { (void)size; }
  /// Steps back over the last `size` bytes read, so that the next read or view starts with
  /// them; false when the source cannot (it reads only forwards: a pipe, zstd).
  virtual bool unread(size_t size) {
    (void)size;
    return false;
  }

  /// A pipe, a terminal or a socket, whose data comes when it comes (not a regular file).
  bool streaming() const { return device == 0 && inode == 0; }
  /// Whether a read() would return without waiting, now or within `timeout_ms` (always true
  /// for a regular file).
  virtual bool ready(int timeout_ms = 0) const = 0;

  /// Device, inode and size of a regular file (zero otherwise), and whether it is compressed.
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t file_size = 0;
  /// Set at the end of a plain regular file that is shorter than it was when opened (truncated
  /// while it was read): its size then, and how far it had been read.
  std::optional<uint64_t> shrunk_to;
  uint64_t read_when_shrunk = 0;
  /// Set by the reader for a file that may still be written to (--incremental): a zstd frame
  /// that is not complete at the end of the file ends the input for now instead of failing it,
  /// and `incomplete_frame` is then set (a later run reads on from there).
  bool may_grow = false;
  bool incomplete_frame = false;
  /// Set by a zstd source when a frame fails its check (its checksum, or damaged data): where
  /// that frame's content starts, in decompressed bytes from the input's start. A frame is
  /// known good only at its end, so its lines before the failure were read unchecked.
  std::optional<uint64_t> corrupt_frame_start;

 protected:
  explicit InputSource(std::string name) : name_(std::move(name)) {}

 private:
  std::string name_;
};

/// Opens `path` ("-" is stdin) and sniffs for zstd. Errors name the file.
Status open_input(const std::string& path, std::unique_ptr<InputSource>& source);

class FingerprintWindow;

/// Moves `source` on to `offset` (seeking when it can, else reading through, decompressing a
/// zstd input), giving `window` the bytes the fingerprints of that position cover. Sets
/// `reached` to whether the source holds that many bytes; a read error is returned.
Status skip_to(InputSource& source, uint64_t offset, FingerprintWindow& window, bool& reached);

/// Whether `fd` has data (or its end) to read within `timeout_ms`.
inline bool fd_ready(int fd, int timeout_ms) {
  pollfd entry{fd, POLLIN, 0};
  int result;
  while ((result = ::poll(&entry, 1, timeout_ms)) < 0 && errno == EINTR) {
  }
  return result != 0;  // (an error: let the read report it)
}

/// The total size of `paths` when every one is a regular, uncompressed file; else 0 (unknown).
uint64_t known_input_size(const std::vector<std::string>& paths);

/// The bytes a source read ahead while sniffing, handed to the concrete source first: what the
/// first reads gave, up to a buffer's worth (a socket of records, or /dev/kmsg, gives a record a
/// read, and drops what a smaller read has no room for).
struct SniffedPrefix {
  std::vector<char> bytes;
  size_t size = 0;
  size_t used = 0;
};

/// A zstd-decompressing source over `fd` (defined in zstd_source.cc).
std::unique_ptr<InputSource> make_zstd_source(std::string name, FileDescriptor fd,
                                              SniffedPrefix prefix);

}  // namespace keyshard
