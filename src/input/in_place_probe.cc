#include "input/in_place_probe.h"

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

constexpr size_t kProbeBytes = 256u << 10;
constexpr size_t kLeastProbeBytes = 64u << 10;  // smaller files are not worth a probe
constexpr int kTrials = 3;

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

bool read_whole(int fd, char* buffer, size_t size) {
  return read_at(fd, buffer, size, 0) == static_cast<long>(size);
}

// Mapping's cost against read()'s on the first `size` bytes of `fd`, the least of a few trials
// each, taken in turn (a trial interrupted by another thread or the host counts as little as
// possible). The first read brings the bytes into the page cache, uncounted, so that both
// measure pages already in memory. True when mapping costs no more than the copy: the copy
// pays part of its cost back downstream, as the bytes it copies are still in the cache when
// the stages after the reader look at them (on a machine where mapping measured 1.25 times the
// copy here, read() made the whole split 5-9% faster, in less CPU and memory).
bool mapping_measured_cheaper(int fd, const std::string& name, size_t size) {
  auto buffer = std::make_unique<char[]>(size);
  if (!read_whole(fd, buffer.get(), size)) return true;
  volatile unsigned sink = touch(buffer.get(), size);
  int64_t mapped = INT64_MAX;
  int64_t copied = INT64_MAX;
  for (int trial = 0; trial < kTrials; ++trial) {
    const int64_t start = thread_nanoseconds();
    {
      const auto window = MappedWindow::map(fd, name, 0, size);
      if (!window) return true;  // (and then view() finds out for itself)
      sink = sink + touch(window->data(), size);
    }
    const int64_t between = thread_nanoseconds();
    if (!read_whole(fd, buffer.get(), size)) return true;
    sink = sink + touch(buffer.get(), size);
    const int64_t end = thread_nanoseconds();
    mapped = std::min(mapped, between - start);
    copied = std::min(copied, end - between);
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
  static std::optional<bool> pays;  // (a file too small to measure leaves it open)
  const std::lock_guard lock(probing);
  if (!pays) {
    const auto size = static_cast<size_t>(std::min<uint64_t>(file_size, kProbeBytes));
    if (size < kLeastProbeBytes) return true;
    pays = mapping_measured_cheaper(fd, name, size);
  }
  return *pays;
}

}  // namespace keyshard
