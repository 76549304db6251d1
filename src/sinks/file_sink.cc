#include "sinks/file_sink.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <optional>

#include "checkpoint/content_hash.h"
#include "sinks/direct_writer.h"
#include "sinks/write_behind.h"
#include "util/number_text.h"
#include "util/stderr_lines.h"

namespace keyshard {
namespace {

constexpr uint64_t kWriteBehind = 1u << 20;  // start writeback once a file has this much new
// A block is written direct when its offset and size are multiples of kDirectAlignment and it
// is this large: a smaller direct write costs more than its copy into the page cache saves
// (-n 1024 writes blocks of 32 KiB).
constexpr size_t kMinDirectWrite = 256u << 10;
constexpr uint64_t kDirectAlignment = 4096;

class FileSink final : public Sink {
 public:
  FileSink(std::string name, FileDescriptor fd, bool owned, bool quiet_on_broken_pipe)
      : name_(std::move(name)),
        fd_(std::move(fd)),
        owned_(owned),
        quiet_on_broken_pipe_(quiet_on_broken_pipe) {}
  ~FileSink() override {
    if (direct_) (void)writer_->settle(*direct_);  // before the descriptor closes
    forget_write_behind();
    if (!owned_) fd_.release();
  }

  Status write(std::string_view block) override {
    if (Status status = cut_back(); !status) return status;
    if (Status status = write_to_page(block); !status) return status;
    bool direct = false;
    if (Status status = direct_write_ready(block, direct); !status) return status;
    if (direct) {
      writer_->submit(direct_, offset_, block);
      wrote_direct(block);
      return {};
    }
    return write_through_cache(block);
  }

  Status write_lent(std::string_view block, bool& lent) override {
    lent = false;
    if (Status status = cut_back(); !status) return status;
    // (Memory off a page cannot be written direct as it stands, nor can a block that starts off
    // one once write_to_page() has taken its head: write() copies it.)
    if (reinterpret_cast<uintptr_t>(block.data()) % kDirectAlignment != 0 ||
        offset_ % kDirectAlignment != 0) {
      return write(block);
    }
    bool direct = false;
    if (Status status = direct_write_ready(block, direct); !status) return status;
    if (!direct) return write_through_cache(block);
    writer_->lend(direct_, offset_, block);
    wrote_direct(block);
    lent = true;
    return {};
  }

  size_t direct_prefix(size_t bytes) const override {
    if (!direct_ || !regular_) return 0;
    const size_t head = (kDirectAlignment - offset_ % kDirectAlignment) % kDirectAlignment;
    if (bytes < head + kMinDirectWrite) return 0;
    const size_t pages = (bytes - head) / kDirectAlignment * kDirectAlignment;
    return pages < kMinDirectWrite ? 0 : head + pages;
  }

  Status settle() override {
    if (!direct_) return {};
    const int error = writer_->settle(*direct_);
    return error == 0 ? Status{} : write_failed(error);
  }

  Status finish() override {
    Status settled = cut_back();
    if (settled) settled = settle();
    forget_write_behind();
    if (!owned_) {
      fd_.release();
      return settled;
    }
    Status closed = fd_.close(name_);
    return settled ? closed : settled;
  }

  const std::string& name() const override { return name_; }

  std::optional<uint64_t> file_size() const override {
    return regular_ ? std::optional<uint64_t>(offset_) : std::nullopt;
  }

  Status sync() override {
    if (!owned_ || !fd_.valid()) return {};
    if (Status status = cut_back(); !status) return status;
    if (Status status = settle(); !status) return status;
    if (::fsync(fd_.get()) != 0) return Status::error("fsync failed: " + errno_text(errno), name_);
    return {};
  }

  OutputState state() const override {
    if (!tracked_) return {};
    // (Asked for once every byte seen ahead is written. Were one not, the size recorded would
    // be past the file's end, and a resume would refuse the file rather than trust it.)
    return OutputState{name_, hash_.size(), 0, hash_.chain(), hash_.digest()};
  }

  Status check_in_place() const override {
    if (!tracked_ || !regular_ || !fd_.valid() || cut_to_) return {};
    struct stat held {}, named {};
    if (::fstat(fd_.get(), &held) != 0) return {};
    if (::stat(name_.c_str(), &named) != 0 || named.st_dev != held.st_dev ||
        named.st_ino != held.st_ino) {
      return changed_behind("was removed or replaced while this run wrote it");
    }
    // (A file cut short, then written past its new end, holds zeros where the bytes cut were,
    // and is as long as what was written: only `keyshard verify` finds that.)
    const auto size = static_cast<uint64_t>(held.st_size);
    if (size >= offset_) return {};
    return changed_behind("was cut short while this run wrote it (it holds " + with_commas(size) +
                          " bytes of the " + with_commas(offset_) + " written)");
  }

  void see_ahead(std::string_view bytes) override {
    if (tracked_) hash_.update(bytes);
  }

  Status cut_back() override {
    if (!cut_to_) return {};
    const auto size = static_cast<off_t>(*cut_to_);
    cut_to_.reset();
    if (::ftruncate(fd_.get(), size) != 0 || ::lseek(fd_.get(), size, SEEK_SET) < 0) {
      return Status::error("cannot cut back to the checkpoint: " + errno_text(errno), name_);
    }
    return {};
  }

  /// Starts tracking, from the hash of what the file already holds.
  void track(ContentHash hash) {
    tracked_ = true;
    offset_ = hash.size();
    hash_ = std::move(hash);
  }
  void write_behind() {
    write_behind_ = true;
    written_behind_ = offset_;
  }
  /// The file is to be cut back to `size` by cut_back() (or by its first write, sync() or
  /// finish(), whichever comes first).
  void cut_back_later(uint64_t size) { cut_to_ = size; }
  /// With --commit sync: whole blocks are written past the page cache from now on, where the
  /// file's file system takes direct writes (see sinks/direct_writer.h). They are made through
  /// the same descriptor, O_DIRECT set while they are under way: a second descriptor per file
  /// would count against the open-file limit.
  void write_direct() {
    if (!regular_ || !takes_direct_writes(fd_.get())) return;
    writer_ = DirectWriter::instance();
    if (writer_ != nullptr) direct_ = std::make_shared<DirectWriter::File>(fd_.get());
  }
  /// Once the file is open: whether it is a regular file, whose size is then offset_ (for a
  /// file reopened to continue a run, once cut_back() has cut it).
  void check_regular() {
    struct stat info {};
    regular_ = ::fstat(fd_.get(), &info) == 0 && S_ISREG(info.st_mode);
  }

 private:
  // Whether `block` goes to the disk direct (a whole block of a file written so); a failure of
  // an earlier direct write of the file is reported here.
  Status direct_write_ready(std::string_view block, bool& direct) {
    direct = false;
    if (!direct_ || block.size() < kMinDirectWrite || offset_ % kDirectAlignment != 0 ||
        block.size() % kDirectAlignment != 0) {
      return {};
    }
    bool refused = false;
    if (const int error = writer_->failure(*direct_, &refused); error != 0) {
      return write_failed(error);
    }
    // (Refused once, as the file system may do where statx said nothing of it: the rest of the
    // file is written through the page cache.)
    direct = !refused && (direct_mode_ || set_direct_mode(true));
    return {};
  }

  // A block that would be written direct but for starting part way through a page (the first
  // after a checkpoint, which writes out every byte held): the bytes up to the next page go
  // through the page cache, and `block` keeps the rest, which direct_write_ready() then takes.
  // Without this the whole block would go through the cache.
  Status write_to_page(std::string_view& block) {
    if (offset_ % kDirectAlignment == 0 || direct_prefix(block.size()) != block.size()) return {};
    const size_t head = kDirectAlignment - offset_ % kDirectAlignment;
    if (Status status = write_through_cache(block.substr(0, head)); !status) return status;
    block.remove_prefix(head);
    return {};
  }

  void wrote_direct(std::string_view block) {
    moved_past_position_ = true;
    hash_written(block);
    offset_ += block.size();
    written_behind_ = offset_;
  }

  // Hashes the part of a block being written at offset_ that see_ahead() did not (the hash
  // runs from offset_ to hash_.size(), never behind the writes).
  void hash_written(std::string_view block) {
    if (tracked_ && offset_ + block.size() > hash_.size()) {
      hash_.update(block.substr(hash_.size() - offset_));
    }
  }

  Status write_through_cache(std::string_view block) {
    if (moved_past_position_ || direct_mode_) {
      // After direct writes, which the descriptor's position did not follow: this one comes
      // after them, in the file and in time, and through the page cache.
      if (Status status = settle(); !status) return status;
      if (direct_mode_ && !set_direct_mode(false)) return write_failed(errno);
      if (::lseek(fd_.get(), static_cast<off_t>(offset_), SEEK_SET) < 0) return write_failed(errno);
      moved_past_position_ = false;
    }
    int error_number = 0;
    Status status = write_all(fd_.get(), block, name_, &error_number);
    if (!status && quiet_on_broken_pipe_ && error_number == EPIPE) return Status::quiet_stop();
    if (!status) return status;
    hash_written(block);
    offset_ += block.size();
    if (write_behind_ && offset_ - written_behind_ >= kWriteBehind) {
      WriteBehind::instance().request(fd_.get(), written_behind_, offset_);
      written_behind_ = offset_;
      asked_write_behind_ = true;
    }
    return status;
  }

  // Sets or clears O_DIRECT on the descriptor; on failure, direct writes are given up (setting)
  // and errno says why.
  bool set_direct_mode(bool on) {
    const int flags = ::fcntl(fd_.get(), F_GETFL);
    if (flags >= 0 && ::fcntl(fd_.get(), F_SETFL, on ? flags | O_DIRECT : flags & ~O_DIRECT) == 0) {
      direct_mode_ = on;
      return true;
    }
    if (on) direct_.reset();
    return false;
  }

  Status changed_behind(const std::string& what) const {
    return Status::error(what + ": the file of that name lacks what the run wrote to it, and "
                                "no checkpoint counts that",
                         name_)
        .because(Cause::kOutputChanged);
  }

  Status write_failed(int error) const {
    return Status::error("write failed: " + errno_text(error), name_);
  }

  // Before the descriptor is closed (a run whose files never reached a MiB starts no thread).
  void forget_write_behind() {
    if (asked_write_behind_ && fd_.valid()) WriteBehind::instance().forget(fd_.get());
    asked_write_behind_ = false;
  }

  std::string name_;
  FileDescriptor fd_;
  bool owned_;
  bool quiet_on_broken_pipe_;
  bool tracked_ = false;
  std::optional<uint64_t> cut_to_;  // the size to cut the file back to (reopen_file_sink)
  bool write_behind_ = false;
  bool asked_write_behind_ = false;  // WriteBehind may hold a range of this file
  bool regular_ = false;             // a regular file, whose size is offset_
  uint64_t offset_ = 0;  // where the next write lands
  uint64_t written_behind_ = 0;  // writeback started for the bytes before this offset
  ContentHash hash_;
  // Direct writes (write_direct()): their state and their writer.
  std::shared_ptr<DirectWriter::File> direct_;
  DirectWriter* writer_ = nullptr;
  bool direct_mode_ = false;          // O_DIRECT is set on fd_
  bool moved_past_position_ = false;  // offset_ is past fd_'s position: direct writes since
};

}  // namespace

Status open_regular_output(const std::string& path, int flags, FileDescriptor& fd) {
  // O_NONBLOCK: a FIFO with no reader fails at once (ENXIO) rather than wait; on a regular file
  // the flag means nothing, and it is cleared anyway.
  fd = FileDescriptor(::open(path.c_str(), flags | O_NONBLOCK, 0666));
  const int error = errno;
  struct stat info {};
  if (fd.valid()) {
    if (::fstat(fd.get(), &info) != 0) return Status::error("cannot stat: " + errno_text(errno), path);
    if (S_ISREG(info.st_mode)) {
      (void)::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
      return {};
    }
    fd = FileDescriptor();
  } else if (error != ENXIO || ::stat(path.c_str(), &info) != 0 || !S_ISFIFO(info.st_mode)) {
    return Status::error("cannot create: " + errno_text(error), path);
  }
  return not_a_regular_output(path, info.st_mode);
}

Status not_a_regular_output(const std::string& path, unsigned mode) {
  const char* what = S_ISFIFO(mode)   ? "a FIFO"
                     : S_ISCHR(mode)  ? "a character device"
                     : S_ISBLK(mode)  ? "a block device"
                     : S_ISSOCK(mode) ? "a socket"
                     : S_ISDIR(mode)  ? "a directory"
                                      : "not a regular file";
  return Status::error(std::string("is ") + what +
                           ", where keyshard writes an output as a regular file (synced, and cut "
                           "back on resume): remove it, or choose another DIR or --name",
                       path);
}

Status open_file_sink(const std::string& path, std::unique_ptr<Sink>& sink, bool tracked,
                      bool write_behind, bool direct) {
  FileDescriptor fd;
  if (tracked) {
    if (Status status = open_regular_output(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, fd);
        !status) {
      return status;
    }
  } else {
    fd = FileDescriptor(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
    if (!fd.valid()) return Status::error("cannot create: " + errno_text(errno), path);
  }
  auto file = std::make_unique<FileSink>(path, std::move(fd), true, false);
  if (tracked) file->track(ContentHash());
  if (write_behind) file->write_behind();
  file->check_regular();
  if (direct) file->write_direct();
  sink = std::move(file);
  return {};
}

Status open_append_sink(const std::string& path, std::unique_ptr<Sink>& sink) {
  FileDescriptor fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666));
  if (!fd.valid()) return Status::error("cannot open to append: " + errno_text(errno), path);
  sink = std::make_unique<FileSink>(path, std::move(fd), true, false);
  return {};
}

Status reopen_file_sink(const std::string& path, const OutputState& recorded, bool finished,
                        std::unique_ptr<Sink>& sink, bool write_behind, bool direct) {
  const int flags = O_RDWR | O_CLOEXEC | (recorded.size == 0 ? O_CREAT : 0);
  FileDescriptor fd(::open(path.c_str(), flags, 0666));
  if (!fd.valid()) {
    const bool removed = errno == ENOENT;
    Status failure = Status::error("cannot open to continue: " + errno_text(errno) +
                                       (removed ? " (it was removed since the checkpoint)" : ""),
                                   path);
    return removed ? std::move(failure).because(Cause::kOutputChanged) : failure;
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return Status::error("cannot stat: " + errno_text(errno), path);
  const auto size = static_cast<uint64_t>(info.st_size);
  if (size < recorded.size) {
    return Status::error("holds " + std::to_string(size) + " bytes, fewer than the " +
                             std::to_string(recorded.size) +
                             " the checkpoint records: it was truncated since",
                         path)
        .because(Cause::kOutputChanged);
  }
  if (finished && size > recorded.size) {
    return Status::error("holds " + std::to_string(size) + " bytes, more than the " +
                             std::to_string(recorded.size) +
                             " the last run left in it: bytes were added after that run ended",
                         path)
        .because(Cause::kOutputChanged);
  }
  ContentHash hash;
  if (Status status = hash.restore(fd.get(), path, recorded.size, recorded.chain, recorded.digest);
      !status) {
    return status;
  }
  auto file = std::make_unique<FileSink>(path, std::move(fd), true, false);
  file->track(std::move(hash));
  // Anything after the recorded size was written by the run after its last checkpoint: it is
  // written again, once every output has passed these checks (see Sink::cut_back).
  file->cut_back_later(recorded.size);
  if (write_behind) file->write_behind();
  file->check_regular();
  if (direct) file->write_direct();
  sink = std::move(file);
  return {};
}

std::unique_ptr<Sink> make_stdout_sink() {
  return std::make_unique<FileSink>("<stdout>", FileDescriptor(STDOUT_FILENO), false, true);
}

namespace {

// Standard error, shared with the progress line (see util/stderr_lines.h).
class StderrSink final : public Sink {
 public:
  Status write(std::string_view block) override {
    if (write_stderr_record(block)) return {};
    return Status::error("write failed: " + errno_text(errno), name_);
  }
  Status finish() override { return {}; }
  const std::string& name() const override { return name_; }

 private:
  std::string name_ = "<stderr>";
};

}  // namespace

std::unique_ptr<Sink> make_stderr_sink() { return std::make_unique<StderrSink>(); }

}  // namespace keyshard
