// The progress line: bytes and events done, the rate, and percent and ETA when the input size is
// known, redrawn on stderr at most ~6 times a second and cleared before the summary. It is shown
// only when stderr is a terminal (or with --progress), never with --no-progress.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace keyshard {

/// Counters the pipeline updates and the progress line reads (any thread; relaxed atomics).
struct ProgressCounters {
  std::atomic<uint64_t> bytes{0};   // input bytes read (decompressed)
  std::atomic<uint64_t> events{0};  // lines routed
};

class ProgressLine {
 public:
  /// `total_bytes`: the input size when known (all inputs regular, uncompressed files), else 0;
  /// `start_bytes`: how much of it was read before this process started (a resumed run).
  ProgressLine(const ProgressCounters& counters, uint64_t total_bytes, uint64_t start_bytes = 0);
  ~ProgressLine();  // stops and clears the line

  void stop();

 private:
  void run();
  void draw();

  const ProgressCounters& counters_;
  uint64_t total_bytes_;
  uint64_t start_bytes_;
  std::chrono::steady_clock::time_point started_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mutex_
  bool drawn_ = false;     // progress thread only
  std::thread thread_;
};

}  // namespace keyshard
