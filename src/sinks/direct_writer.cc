#include "sinks/direct_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <system_error>

#include "util/thread_priority.h"

namespace keyshard {
namespace {

constexpr size_t kAlignment = 4096;

// Writes all of [data, data + size) at `offset`; 0, or the errno of the failure. A file system that
// refuses the direct write after all (EINVAL: an alignment statx did not tell) has the descriptor's
// O_DIRECT taken off, and this write and the next go through the page cache (`*refused` is set).
int write_at(int fd, const char* data, size_t size, uint64_t offset, bool* refused) {
  while (size > 0) {
    const ssize_t written = ::pwrite(fd, data, size, static_cast<off_t>(offset));
    if (written < 0) {
      const int error = errno;
      if (error == EINTR) continue;
      const int flags = ::fcntl(fd, F_GETFL);
      if (error != EINVAL || flags < 0 || (flags & O_DIRECT) == 0 ||
          ::fcntl(fd, F_SETFL, flags & ~O_DIRECT) != 0) {
        return error;
      }
      *refused = true;
      continue;
    }
    if (written == 0) return EIO;
    data += written;
    size -= static_cast<size_t>(written);
    offset += static_cast<uint64_t>(written);
  }
  return 0;
}

}  // namespace

DirectWriter* DirectWriter::instance() {
  static DirectWriter writer;
  return writer.threads_.empty() ? nullptr : &writer;
}

DirectWriter::DirectWriter() {
  try {
    for (unsigned i = 0; i < kThreads; ++i) threads_.emplace_back([this] { run(); });
  } catch (const std::system_error&) {
    // No thread to be had (ulimit -u or -v): instance() says so, and files are written as usual.
  }
}

DirectWriter::~DirectWriter() {
  if (threads_.empty()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }
  for (std::thread& thread : threads_) thread.join();
}

void DirectWriter::submit(const std::shared_ptr<File>& file, uint64_t offset,
                          std::string_view block) {
  while (!block.empty()) {
    const size_t size = std::min(block.size(), kPiece);
    char* buffer = nullptr;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return !free_.empty() || buffers_.size() < kBudget / kPiece; });
      if (free_.empty()) {
        void* memory = std::aligned_alloc(kAlignment, kPiece);
        if (memory == nullptr) throw std::bad_alloc();
        buffers_.emplace_back(static_cast<char*>(memory), [](char* p) { std::free(p); });
        free_.push_back(buffers_.back().get());
      }
      buffer = free_.back();
      free_.pop_back();
    }
    // (Outside the lock: the threads go on writing meanwhile.)
    std::memcpy(buffer, block.data(), size);
    {
      std::lock_guard lock(mutex_);
      ++file->pending;
      queue_.push_back(Write{file, offset, buffer, size, false});
      changed_.notify_all();
    }
    block.remove_prefix(size);
    offset += size;
  }
}

void DirectWriter::lend(const std::shared_ptr<File>& file, uint64_t offset,
                        std::string_view block) {
  std::lock_guard lock(mutex_);
  ++file->pending;
  queue_.push_back(Write{file, offset, const_cast<char*>(block.data()), block.size(), true});
  changed_.notify_all();
}

int DirectWriter::settle(File& file) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return file.pending == 0; });
  return file.error;
}

int DirectWriter::failure(File& file, bool* refused) {
  std::lock_guard lock(mutex_);
  *refused = file.refused;
  return file.error;
}

void DirectWriter::run() {
  name_this_thread("ks-direct-write");
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) return;  // stopping, nothing asked
    Write write = std::move(queue_.front());
    queue_.pop_front();
    // After a failure, the file's later writes are not made: its run is failing.
    const bool write_it = write.file->error == 0;
    lock.unlock();
    bool refused = false;
    const int error =
        write_it ? write_at(write.file->fd, write.data, write.size, write.offset, &refused) : 0;
    lock.lock();
    if (refused) write.file->refused = true;
    if (error != 0 && write.file->error == 0) write.file->error = error;
    --write.file->pending;
    if (!write.lent) free_.push_back(write.data);
    changed_.notify_all();
  }
}

bool takes_direct_writes(int fd) {
  struct statx info {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN | STATX_TYPE, &info) != 0 ||
      (info.stx_mask & STATX_DIOALIGN) == 0 || !S_ISREG(info.stx_mode)) {
    return false;
  }
  const auto fits = [](uint32_t alignment) {
    return alignment != 0 && alignment <= kAlignment && kAlignment % alignment == 0;
  };
  return fits(info.stx_dio_mem_align) && fits(info.stx_dio_offset_align);
}

}  // namespace keyshard
