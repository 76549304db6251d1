#include "input/in_place_probe.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include "input/mapped_window.h"
#include "util/files.h"

namespace keyshard {
namespace {

std::atomic<InPlacePolicy> policy{InPlacePolicy::measured};

constexpr size_t kProbeBytes = 256u << 10;      // a region's bytes, at most
constexpr size_t kLeastProbeBytes = 64u << 10;  // and at least: a file too small for six
                                                // such regions (384 KiB) is not measured
constexpr int kTrials = 3;
// Each trial reads bytes of its own (two regions a trial: one mapped, one copied).
constexpr size_t kRegions = 2 * kTrials;

// The thread's CPU time, in nanoseconds: what the reader spends, whatever else runs.
int64_t thread_nanoseconds() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

// Reads one byte of every cache line, as finding the line ends does.
unsigned touch(const char* data, size_t size) {
  unsigned sum = 0;
  for (size_t i = 0; i < size; i += 64) sum += static_cast<unsigned char>(data[i]);
  return sum;
}

// Brings the first `span` bytes of `fd` into the page cache, so that the trials measure bytes in
// memory, as a run's reader mostly meets them, rather than the disk: a mapping that waits for
// the disk costs more CPU time than a read() that does, which made the probe choose read()
// whenever the file was not in memory. One byte of each page is read (which waits for the
// page), so that the rest of its bytes stay out of the CPU's caches.
void bring_into_page_cache(int fd, size_t span) {
  (void)::posix_fadvise(fd, 0, static_cast<off_t>(span), POSIX_FADV_WILLNEED);
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  char byte = 0;
  for (size_t at = 0; at < span; at += page) (void)read_at(fd, &byte, 1, at);
}

// Mapping's cost against read()'s, each over `size` bytes of `fd` at a time, the least of a few
// trials each (a trial interrupted by another thread or the host counts as little as
// possible), each as a run's reader pays it:
// - Every trial maps one region of the file and copies another, which no trial touched before,
//   alternating which comes first: the reader meets each byte once, so the copy reads bytes
//   that are not in the CPU's caches. (Copying bytes again from the caches once made the copy
//   look 2.4 times cheaper than it is in a run: 13 µs for 256 KiB against 31 µs.)
// - A mapping's mmap() and munmap() count at their share of a window (16 MiB), which a run maps
//   at once. (Counted whole, they took the mapping from 22 µs to 40 µs for 256 KiB, against
//   38 µs for the copy, on a machine where a split of 1 GiB mapped ran 5-6% faster than with
//   read(), in 30-40% less system time.)
//   Filling in its page tables (MappedWindow::populate) counts whole: a run pays it per byte.
// - The touch after the copy finds the bytes in the caches, as the stages after the reader do.
// One thing favours read(): every copy goes to one buffer, which stays in the cache, where a
// run's reader copies into the chunk that the workers freed last. So mapping wins only by a
// margin, and a machine where the two come near keeps read(): on one, whose probe put mapping
// at 1.25 times a copy from the caches, read() made the split 5% faster.
// True when mapping costs no more than the copy; nullopt when the file could not be read so.
std::optional<bool> mapping_measured_cheaper(int fd, const std::string& name, size_t size) {
  bring_into_page_cache(fd, size * kRegions);
  const auto buffer = std::make_unique<char[]>(size);  // (zeroed: its pages present, as a
                                                       // chunk's are when reused)
  volatile unsigned sink = 0;
  // Each returns its CPU time, or -1 when the file cannot be read so.
  auto map_cost = [&](uint64_t at) -> int64_t {
    const int64_t start = thread_nanoseconds();
    int64_t mapped_at = 0;
    int64_t touched_at = 0;
    {
      const auto window = MappedWindow::map(fd, name, at, size);
      if (!window) return -1;
      mapped_at = thread_nanoseconds();
      window->populate();
      sink = sink + touch(window->data(), size);
      touched_at = thread_nanoseconds();
    }  // (unmapped here)
    const int64_t calls = mapped_at - start + thread_nanoseconds() - touched_at;
    return touched_at - mapped_at +
           static_cast<int64_t>(static_cast<double>(calls) * static_cast<double>(size) /
                                static_cast<double>(kMappedWindowBytes));
  };
  auto copy_cost = [&](uint64_t at) -> int64_t {
    const int64_t start = thread_nanoseconds();
    if (read_at(fd, buffer.get(), size, at) != static_cast<long>(size)) return -1;
    sink = sink + touch(buffer.get(), size);
    return thread_nanoseconds() - start;
  };
  int64_t mapped = INT64_MAX;
  int64_t copied = INT64_MAX;
  for (int trial = 0; trial < kTrials; ++trial) {
    const uint64_t first = uint64_t{2} * static_cast<uint64_t>(trial) * size;
    int64_t map = 0;
    int64_t copy = 0;
    if (trial % 2 == 0) {
      map = map_cost(first);
      copy = copy_cost(first + size);
    } else {
      copy = copy_cost(first);
      map = map_cost(first + size);
    }
    if (map < 0 || copy < 0) return std::nullopt;  // (and then view() finds out for itself)
    mapped = std::min(mapped, map);
    copied = std::min(copied, copy);
  }
  return mapped <= copied;
}

}  // namespace

Status in_place_policy_from_environment(InPlacePolicy& chosen) {
  const char* value = std::getenv("KEYSHARD_READ_IN_PLACE");
  const std::string_view text = value == nullptr ? "" : value;
  if (text.empty() || text == "auto") {
    chosen = InPlacePolicy::measured;
  } else if (text == "yes") {
    chosen = InPlacePolicy::always;
  } else if (text == "no") {
    chosen = InPlacePolicy::never;
  } else {
    return Status::error("KEYSHARD_READ_IN_PLACE is '" + std::string(text) +
                             "': use auto (the default), yes or no",
                         {}, kExitUsage);
  }
  return {};
}

void set_in_place_policy(InPlacePolicy chosen) { policy.store(chosen); }

bool read_in_place_pays(int fd, const std::string& name, uint64_t file_size) {
  switch (policy.load()) {
    case InPlacePolicy::always: return true;
    case InPlacePolicy::never: return false;
    case InPlacePolicy::measured: break;
  }
  static std::mutex probing;
  // (A file too small to measure, or one that cannot be measured, leaves it open.)
  static std::optional<bool> pays;
  const std::lock_guard lock(probing);
  if (!pays) {
    // A file that shrank since it was opened is not measured: mapping what it no longer holds
    // would end the run (see mapped_window.h), where view() reads such a file instead.
    struct stat info {};
    if (::fstat(fd, &info) != 0 || static_cast<uint64_t>(info.st_size) < file_size) return true;
    // Regions of whole 64 KiB (a multiple of any page size Linux uses), as many as the trials
    // need, within the file.
    const uint64_t share = file_size / kRegions / kLeastProbeBytes * kLeastProbeBytes;
    const auto size = static_cast<size_t>(std::min<uint64_t>(share, kProbeBytes));
    if (size < kLeastProbeBytes) return true;
    pays = mapping_measured_cheaper(fd, name, size);
    if (!pays) return true;
  }
  return *pays;
}

}  // namespace keyshard
