// close_writes(): a process about to end lets the writes under way finish (a pipe then ends
// with the whole block it was given) and starts none. It closes writes for the whole process
// for good, so each case runs in a child process.
#include "util/files.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "../in_child.h"

namespace keyshard {
namespace {

constexpr size_t kBlock = 1 << 20;  // more than a pipe holds: its write waits for the reader

int unread(int fd) {
  int bytes = 0;
  return ::ioctl(fd, FIONREAD, &bytes) == 0 ? bytes : -1;
}

// Waits until the pipe `fd` is full, i.e. a write to it waits for the reader.
bool wait_until_full(int fd) {
  const int capacity = ::fcntl(fd, F_GETPIPE_SZ);
  for (int tries = 0; tries < 4000; ++tries) {
    if (unread(fd) >= capacity) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// Starts a write of kBlock bytes to a new pipe and waits until it waits for the reader; the
// pipe's read end, or -1. (Static: the detached writer outlives the caller.)
int start_a_waiting_write() {
  static int pipe_ends[2];
  static const std::string block(kBlock, 'x');
  if (::pipe(pipe_ends) != 0) return -1;
  std::thread([] { (void)write_all(pipe_ends[1], block, "<pipe>"); }).detach();
  return wait_until_full(pipe_ends[0]) ? pipe_ends[0] : -1;
}

}  // namespace

TEST_CASE("close_writes lets the write under way finish, then no write starts") {
  const int status = in_child([] {
    const int pipe_reader = start_a_waiting_write();
    if (pipe_reader < 0) return 11;
    // The reader begins 100 ms after close_writes() was called, so a close_writes() that
    // returns sooner did not wait for the write under way.
    std::atomic<bool> closing{false};
    std::atomic<size_t> drained{0};
    std::thread reader([&, pipe_reader] {
      while (!closing.load()) std::this_thread::yield();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      std::string buffer(kBlock, '\0');
      while (drained.load() < kBlock) {
        const ssize_t got = ::read(pipe_reader, buffer.data(), buffer.size());
        if (got <= 0) return;
        drained += static_cast<size_t>(got);
      }
    });
    const auto start = std::chrono::steady_clock::now();
    closing.store(true);
    const bool finished = close_writes(3000);
    const auto waited = std::chrono::steady_clock::now() - start;
    reader.join();
    if (!finished) return 12;
    if (waited < std::chrono::milliseconds(100)) return 13;
    if (drained.load() != kBlock) return 14;  // the whole block, not part of it
    // A write that would start now waits for the end of the process instead.
    static int later[2];
    if (::pipe(later) != 0) return 15;
    std::thread late_writer([] { (void)write_all(later[1], "late\n", "<pipe>"); });
    late_writer.detach();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return unread(later[0]) == 0 ? 0 : 16;
  });
  CHECK(status == 0);
}

TEST_CASE("close_writes gives up on a write that nothing reads, after its patience") {
  const int status = in_child([] {
    const int pipe_reader = start_a_waiting_write();
    if (pipe_reader < 0) return 11;
    const auto start = std::chrono::steady_clock::now();
    if (close_writes(100)) return 12;
    return std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(100) ? 0 : 13;
  });
  CHECK(status == 0);
}

TEST_CASE("close_writes with no write under way returns at once") {
  const int status = in_child([] { return close_writes(0) ? 0 : 10; });
  CHECK(status == 0);
}

}  // namespace keyshard
