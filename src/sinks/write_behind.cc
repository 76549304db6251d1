#include "sinks/write_behind.h"

#include <fcntl.h>

#include <algorithm>
#include <system_error>

#include "util/thread_priority.h"

namespace keyshard {

namespace {

// Only starts the writeback; any error shows up at the next fsync.
void start_writeback(int fd, uint64_t from, uint64_t to) {
  ::sync_file_range(fd, static_cast<off64_t>(from), static_cast<off64_t>(to - from),
                    SYNC_FILE_RANGE_WRITE);
}

}  // namespace

WriteBehind& WriteBehind::instance() {
  static WriteBehind write_behind;
  return write_behind;
}

WriteBehind::WriteBehind() {
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error&) {
    // No thread to be had (ulimit -u or -v): each request starts its writeback itself.
  }
}

WriteBehind::~WriteBehind() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }
  thread_.join();
}

void WriteBehind::request(int fd, uint64_t from, uint64_t to) {
  if (!thread_.joinable()) {
    start_writeback(fd, from, to);
    return;
  }
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
    start_writeback(fd, range.from, range.to);
    lock.lock();
    starting_.reset();
    changed_.notify_all();
  }
}

}  // namespace keyshard
