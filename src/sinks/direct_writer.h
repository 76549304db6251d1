// Writing whole blocks of the partition files past the page cache (O_DIRECT), from threads of
// their own (--commit sync). Those bytes must reach the disk before the checkpoint anyway; written
// through the page cache, each one costs a copy into the cache and then the cache's own work on it
// (its pages, the writeback), which on two cores took about a fifth of the run's CPU time. Written
// direct, the disk reads them from a buffer of keyshard's, while the owners go on.
//
// An owner hands over a block and goes on: the block is copied into one of the writer's buffers
// (at most kBudget bytes are in flight; an owner waits for room), and written from there. A failed
// write is reported by the next call for that file; settle() waits for the file's writes.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

namespace keyshard {

class DirectWriter {
 public:
  /// The bytes of the blocks in flight, all files together.
  static constexpr size_t kBudget = 16u << 20;
  /// The size of each buffer: a larger block is written in pieces of this size.
  static constexpr size_t kPiece = 1u << 20;
  /// The threads that write, each one write at a time: the disk has this many in flight.
  static constexpr unsigned kThreads = 2;

  /// One file's direct writes, shared by its sink and its writes in flight.
  struct File {
    explicit File(int direct_fd) : fd(direct_fd) {}
    int fd;  // with O_DIRECT set while writes are handed over; owned by the sink
    // Guarded by the writer's mutex:
    unsigned pending = 0;  // writes handed over and not done
    int error = 0;         // the errno of the first write that failed
    bool refused = false;  // a direct write was refused (EINVAL) and made as an ordinary one
  };

  /// The one instance; its threads start on first use and stop at exit. Null when no thread can
  /// be started: the files are then written through the page cache.
  static DirectWriter* instance();

  /// Has `block` written at `offset` of `file`: copies it and returns, or first waits until the
  /// bytes in flight leave room for it. `offset` and the size must suit the file's direct I/O.
  void submit(const std::shared_ptr<File>& file, uint64_t offset, std::string_view block);
  /// Has `block` written at `offset` of `file` from where it stands, without a copy: its memory
  /// (aligned to 4096 bytes) must stay as it is until settle(file) returns.
  void lend(const std::shared_ptr<File>& file, uint64_t offset, std::string_view block);
  /// Waits until every write handed over for `file` is done; the errno of the first that failed,
  /// else 0.
  int settle(File& file);
  /// The errno of the first of `file`'s writes that failed so far, else 0; does not wait.
  /// `*refused`: whether the file system refused a direct write of the file (see File).
  int failure(File& file, bool* refused);

  DirectWriter(const DirectWriter&) = delete;
  DirectWriter& operator=(const DirectWriter&) = delete;
  ~DirectWriter();

 private:
  DirectWriter();
  void run();

  struct Write {
    std::shared_ptr<File> file;
    uint64_t offset;
    char* data;  // one of buffers_, or lent by the caller
    size_t size;
    bool lent;
  };
  using Buffer = std::unique_ptr<char, void (*)(char*)>;

  std::mutex mutex_;
  std::condition_variable changed_;
  // Guarded by mutex_:
  std::deque<Write> queue_;
  std::vector<Buffer> buffers_;  // every buffer made: kBudget / kPiece at most
  std::vector<char*> free_;      // the buffers not in use
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

/// Whether the regular file open as `fd` takes direct writes whose offsets and sizes are multiples
/// of 4096 from buffers aligned so, as its file system says (statx); a file system that does not
/// say (tmpfs) is written through the page cache.
bool takes_direct_writes(int fd);

}  // namespace keyshard
