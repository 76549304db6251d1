#include "sinks/write_behind.h"

#include <fcntl.h>

#include <algorithm>

#include "util/thread_priority.h"

namespace keyshard {

WriteBehind& WriteBehind::instance() {
  static WriteBehind write_behind;
  return write_behind;
}

WriteBehind::WriteBehind() : thread_([this] { run(); }) {}

WriteBehind::~WriteBehind() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }
  thread_.join();
}

void WriteBehind::request(int fd, uint64_t from, uint64_t to) {
  std::lock_guard lock(mutex_);
  auto [it, added] = pending_.try_emplace(fd, Range{from, to});
  if (added) {
    order_.push_back(fd);
    changed_.notify_all();
  } else {
    it->second.from = std::min(it->second.from, from);
    it->second.to = std::max(it->second.to, to);
  }
}

void WriteBehind::forget(int fd) {
  std::unique_lock lock(mutex_);
  if (pending_.erase(fd) != 0) std::erase(order_, fd);
  changed_.wait(lock, [&] { return starting_ != fd; });
}

void WriteBehind::run() {
  name_this_thread("ks-write-behind");
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return !order_.empty() || stopping_; });
    if (order_.empty()) return;  // stopping, nothing asked
    const int fd = order_.front();
    order_.pop_front();
    const Range range = pending_.at(fd);
    pending_.erase(fd);
    starting_ = fd;
    lock.unlock();
    // Only starts the writeback; any error shows up at the next fsync.
    ::sync_file_range(fd, static_cast<off64_t>(range.from),
                      static_cast<off64_t>(range.to - range.from), SYNC_FILE_RANGE_WRITE);
    lock.lock();
    starting_.reset();
    changed_.notify_all();
  }
}

}  // namespace keyshard
