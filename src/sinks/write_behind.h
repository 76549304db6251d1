// Starting the writeback of what the partition files have been given (--commit sync), from a
// thread of its own. sync_file_range() submits the pages to the block layer, and the block
// layer may make its caller wait (writeback throttling) until earlier writes are done: with many
// files, an owner that started the writeback itself would spend much of the run there, holding
// up every partition it writes. Best effort, as before: a failed writeback shows up at the
// fsync that comes before each checkpoint.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

namespace keyshard {

class WriteBehind {
 public:
  /// The one instance; its thread starts on first use and stops at exit. (When no thread can
  /// be started, each request starts its writeback itself.)
  static WriteBehind& instance();

  /// Asks for the writeback of bytes [from, to) of `fd` to start; returns at once. A range asked
  /// for a file whose last one has not been started yet joins it.
  void request(int fd, uint64_t from, uint64_t to);
  /// Drops what was asked for `fd` and not started, and waits until none of it is being
  /// started: to be called before `fd` is closed, so that its number may be reused.
  void forget(int fd);

  WriteBehind(const WriteBehind&) = delete;
  WriteBehind& operator=(const WriteBehind&) = delete;
  ~WriteBehind();

 private:
  WriteBehind();
  void run();

  struct Range {
    uint64_t from;
    uint64_t to;
  };
  std::mutex mutex_;
  std::condition_variable changed_;
  // Guarded by mutex_:
  std::unordered_map<int, Range> pending_;  // per file, what is asked and not started
  std::deque<int> order_;                   // the files of pending_, oldest request first
  std::optional<int> starting_;             // the file whose writeback is being started
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace keyshard
