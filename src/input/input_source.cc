#include "input/input_source.h"

#include "input/in_place_probe.h"
#include "input/input_position.h"
#include "input/mapped_window.h"
#include "util/files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace keyshard {
namespace {

constexpr unsigned char kZstdMagic[4] = {0x28, 0xb5, 0x2f, 0xfd};
constexpr int kPipeBufferSize = 1 << 20;
constexpr size_t kSniffBuffer = 64 << 10;  // what the first read of an input asks for

// What an input is, by its first four bytes (`size`: fewer when it is that short, or when its
// first line is; two tell UTF-16's byte-order mark), when keyshard cannot read it as text: another
// compressor's output, an archive, UTF-16. Text does not start so: each holds a control byte or
// one that UTF-8 never starts with, but for bzip2's "BZh" and a digit.
struct Unreadable {
  const char* what;    // "is ..."
  const char* reader;  // a command that turns it into text on the way in, FILE for the file
};
std::optional<Unreadable> unreadable_kind(const unsigned char* magic, size_t size) {
  if (size >= 2 &&
      ((magic[0] == 0xff && magic[1] == 0xfe) || (magic[0] == 0xfe && magic[1] == 0xff))) {
    return Unreadable{"UTF-16 text (as some Windows programs save it)",
                      "iconv -f UTF-16 -t UTF-8 FILE"};
  }
  if (size < 4) return std::nullopt;
  if (magic[0] == 0x1f && magic[1] == 0x8b && magic[2] == 0x08) {
    return Unreadable{"gzip-compressed", "zcat FILE"};
  }
  if (std::memcmp(magic, "\xFD" "7zX", 4) == 0) return Unreadable{"xz-compressed", "xzcat FILE"};
  if (std::memcmp(magic, "\x04\x22\x4D\x18", 4) == 0) {
    return Unreadable{"lz4-compressed", "lz4cat FILE"};
  }
  if (std::memcmp(magic, "BZh", 3) == 0 && magic[3] >= '1' && magic[3] <= '9') {
    return Unreadable{"bzip2-compressed", "bzcat FILE"};
  }
  if (std::memcmp(magic, "PK\x03\x04", 4) == 0) return Unreadable{"a zip archive", "unzip -p FILE"};
  return std::nullopt;
}

// A zstd frame, or a zstd skippable frame (magic 0x184D2A50..5F, as pzstd and the seekable
// format write first): both start a zstd stream.
bool is_zstd_magic(const unsigned char* magic) {
  const bool skippable =
      (magic[0] & 0xf0) == 0x50 && magic[1] == 0x2a && magic[2] == 0x4d && magic[3] == 0x18;
  return skippable || std::memcmp(magic, kZstdMagic, 4) == 0;
}

// A plain input. A regular file that no program has open for writing is read in place, a
// window of it mapped at a time (view()); what is left of it, and any other file, by read().
class PlainSource final : public InputSource {
 public:
  /// `regular`: a regular file, read from where its descriptor stood before the sniffing (the
  /// start, or where a shell's `read` left standard input) when it can seek.
  PlainSource(std::string name, FileDescriptor fd, SniffedPrefix prefix, bool regular)
      : InputSource(std::move(name)), fd_(std::move(fd)), prefix_(std::move(prefix)) {
    const off_t at = regular ? ::lseek(fd_.get(), 0, SEEK_CUR) : -1;
    if (at >= static_cast<off_t>(prefix_.size)) {
      seekable_ = true;
      offset_ = static_cast<uint64_t>(at);
      position_ = offset_ - prefix_.size;
    }
  }

  Status read(char* buffer, size_t size, size_t& got) override {
    got = 0;
    if (seekable_) return read_file(buffer, size, got);
    if (prefix_.used < prefix_.size) {
      got = std::min(size, prefix_.size - prefix_.used);
      std::memcpy(buffer, prefix_.bytes.data() + prefix_.used, got);
      prefix_.used += got;
      return {};
    }
    const long count = read_input(fd_.get(), buffer, size);
    if (count < 0) return Status::error("read failed: " + errno_text(errno), name());
    got = static_cast<size_t>(count);
    return {};
  }

  bool compressed() const override { return false; }

  bool ready(int timeout_ms) const override {
    return !streaming() || prefix_.used < prefix_.size || fd_ready(fd_.get(), timeout_ms);
  }

  bool seek(uint64_t offset, std::string& head, std::string& tail) override {
    if (!seekable_) return false;
    struct stat info {};
    if (::fstat(fd_.get(), &info) != 0 || static_cast<uint64_t>(info.st_size) < offset) {
      return false;
    }
    const uint64_t window = std::min(offset, kFingerprintBytes);
    if (!read_back(0, window, head) || !read_back(offset - window, window, tail)) return false;
    if (!move_to(offset)) return false;
    position_ = offset;
    return true;
  }

  std::string_view view(size_t size, std::shared_ptr<const MappedWindow>& window) override {
    if (!seekable_ || position_ + size > file_size) return {};
    if (!mappable_) {
      mappable_ = nobody_writes(fd_.get()) && read_in_place_pays(fd_.get(), name(), file_size);
    }
    // A file that shrank since it was opened is read() from here on, which reports its end.
    if (struct stat info {}; !*mappable_ || ::fstat(fd_.get(), &info) != 0 ||
                             static_cast<uint64_t>(info.st_size) < file_size) {
      mappable_ = false;
      window_.reset();  // (the chunks that view it keep it mapped while they need it)
      return {};
    }
    if (!window_ || position_ < window_->offset() ||
        position_ + size > window_->offset() + window_->length()) {
      window_.reset();
      const uint64_t start = position_ - position_ % kPageSize;
      const uint64_t length =
          std::min(file_size - start, std::max(kMappedWindowBytes, position_ + size - start));
      window_ = MappedWindow::map(fd_.get(), name(), start, static_cast<size_t>(length));
      if (!window_) {
        mappable_ = false;
        return {};
      }
      window_->populate();
    }
    window = window_;
    return {window_->data() + (position_ - window_->offset()), size};
  }

  void skip(size_t size) override {
    position_ += size;
    (void)move_to(position_);  // (failing, it is tried again before the next read)
  }

  bool unread(size_t size) override {
    if (!seekable_ || size > position_ || !move_to(position_ - size)) return false;
    position_ -= size;
    return true;
  }

 private:
  // A regular file is read from position_, which view() and skip() share. The descriptor's
  // own offset follows it (as tools such as progress(1) show how far a reader got).
  bool move_to(uint64_t offset) {
    if (::lseek(fd_.get(), static_cast<off_t>(offset), SEEK_SET) < 0) return false;
    offset_ = offset;
    return true;
  }

  Status read_file(char* buffer, size_t size, size_t& got) {
    if (offset_ != position_ && !move_to(position_)) {
      return Status::error("cannot seek: " + errno_text(errno), name());
    }
    // (Not read_input(): a file's read does not wait for a writer, so a signal need not cut it
    // short; the reader stops between chunks, and finds the end of a file it has read whole.)
    const long count = read_some(fd_.get(), buffer, size);
    if (count < 0) return Status::error("read failed: " + errno_text(errno), name());
    got = static_cast<size_t>(count);
    position_ += got;
    offset_ = position_;
    if (struct stat info {}; got == 0 && ::fstat(fd_.get(), &info) == 0 &&
                             static_cast<uint64_t>(info.st_size) < file_size) {
      shrunk_to = static_cast<uint64_t>(info.st_size);
      read_when_shrunk = position_;
    }
    return {};
  }

  bool read_back(uint64_t at, uint64_t size, std::string& out) {
    out.assign(size, '\0');
    return read_at(fd_.get(), out.data(), size, at) == static_cast<long>(size);
  }

  static constexpr uint64_t kPageSize = 1u << 16;  // a multiple of any page size Linux uses

  FileDescriptor fd_;
  SniffedPrefix prefix_;  // (a file that can seek reads these bytes again instead)
  bool seekable_ = false;  // a regular file that can seek: read from position_, maybe in place
  uint64_t position_ = 0;  // its next byte
  uint64_t offset_ = 0;    // the descriptor's offset
  std::optional<bool> mappable_;  // known at the first view()
  std::shared_ptr<const MappedWindow> window_;
};

}  // namespace

uint64_t known_input_size(const std::vector<std::string>& paths) {
  uint64_t total = 0;
  for (const std::string& path : paths) {
    struct stat info {};
    if (path == "-" || ::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return 0;
    FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    unsigned char magic[4] = {};
    if (!fd.valid()) return 0;
    if (::read(fd.get(), magic, 4) == 4 && is_zstd_magic(magic)) return 0;
    total += static_cast<uint64_t>(info.st_size);
  }
  return total;
}

Status open_input(const std::string& path, std::unique_ptr<InputSource>& source) {
  const bool is_stdin = path == "-";
  const std::string name = is_stdin ? "<stdin>" : path;
  if (is_stdin && standard_stream_was_closed(STDIN_FILENO)) {
    return Status::error("cannot read: standard input is closed", name);
  }
  FileDescriptor fd(is_stdin ? ::dup(STDIN_FILENO) : ::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::error("cannot open: " + errno_text(errno), name);

  struct stat info {};
  if (::fstat(fd.get(), &info) == 0) {
    if (S_ISDIR(info.st_mode)) return Status::error("is a directory", name);
    if (S_ISFIFO(info.st_mode)) {
      ::fcntl(fd.get(), F_SETPIPE_SZ, kPipeBufferSize);  // best effort: fewer, larger reads
    } else if (S_ISREG(info.st_mode)) {
      ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
    }
  }
  const bool regular = S_ISREG(info.st_mode);

  // The sniffing stops at a newline, which no magic holds: from a pipe, a first line shorter
  // than the magic ("1\n", then nothing for a while) is not held until more bytes come.
  // Each read asks for a buffer's worth, whatever the sniffing needs: a read of a socket of
  // records drops what does not fit (and /dev/kmsg refuses it).
  SniffedPrefix prefix;
  prefix.bytes.resize(kSniffBuffer);
  while (prefix.size < 4 && std::memchr(prefix.bytes.data(), '\n', prefix.size) == nullptr) {
    const long count = read_input(fd.get(), prefix.bytes.data() + prefix.size,
                                  prefix.bytes.size() - prefix.size);
    if (count < 0) return Status::error("read failed: " + errno_text(errno), name);
    if (count == 0) break;
    prefix.size += static_cast<size_t>(count);
  }
  const auto* magic = reinterpret_cast<const unsigned char*>(prefix.bytes.data());
  if (const auto kind = unreadable_kind(magic, prefix.size)) {
    // (Read as text, it would be a handful of "lines" of garbage, each a dead letter, or, with
    // --format line, events.)
    std::string reader = kind->reader;
    if (!is_stdin) reader.replace(reader.find("FILE"), 4, path);
    return Status::error(fmt::format("is {}; keyshard reads UTF-8 text, and zstd by its magic "
                                     "bytes: turn it into text on the way in, e.g. `{} | "
                                     "keyshard ... -`",
                                     kind->what, reader),
                         name)
        .because(Cause::kNotText);
  }
  if (prefix.size >= 4 && is_zstd_magic(magic)) {
    source = make_zstd_source(name, std::move(fd), std::move(prefix));
  } else {
    source = std::make_unique<PlainSource>(name, std::move(fd), std::move(prefix), regular);
  }
  if (regular) {
    source->device = static_cast<uint64_t>(info.st_dev);
    source->inode = static_cast<uint64_t>(info.st_ino);
    source->file_size = static_cast<uint64_t>(info.st_size);
  }
  return {};
}

Status skip_to(InputSource& source, uint64_t offset, FingerprintWindow& window, bool& reached) {
  window.reset();
  std::string head, tail;
  if (source.seek(offset, head, tail)) {
    window.assign(std::move(head), std::move(tail));
    reached = true;
    return {};
  }
  auto buffer = std::make_unique<char[]>(1 << 20);
  uint64_t skipped = 0;
  while (skipped < offset) {
    size_t got = 0;
    const size_t wanted = std::min<uint64_t>(1 << 20, offset - skipped);
    if (Status status = source.read(buffer.get(), wanted, got); !status) return status;
    if (got == 0) break;
    window.add({buffer.get(), got});
    skipped += got;
  }
  reached = skipped == offset;
  return {};
}

}  // namespace keyshard
