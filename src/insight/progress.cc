#include "insight/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <string>

#include "util/elapsed.h"
#include "util/number_text.h"
#include "util/stderr_lines.h"

namespace keyshard {
namespace {

constexpr auto kInterval = std::chrono::milliseconds(166);  // ~6 updates a second
// Where each update is a line of its own (a log file, a pipe): after the first, one in 5 s.
constexpr auto kLineInterval = std::chrono::seconds(5);

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int unit = 0;
  while (bytes >= 1000 && unit < 4) {
    bytes /= 1000;
    ++unit;
  }
  return fmt::format("{:.1f} {}", bytes, units[unit]);
}

}  // namespace

ProgressLine::ProgressLine(const ProgressCounters& counters, uint64_t total_bytes,
                           uint64_t start_bytes)
    : counters_(counters),
      total_bytes_(total_bytes),
      start_bytes_(start_bytes),
      started_(std::chrono::steady_clock::now()),
      thread_([this] { run(); }) {}

ProgressLine::~ProgressLine() { stop(); }

void ProgressLine::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (drawn_) clear_status_line();
}

void ProgressLine::run() {
  const bool redrawn = status_line_redraws();
  std::unique_lock lock(mutex_);
  auto interval = std::chrono::duration_cast<std::chrono::milliseconds>(kInterval);
  while (!wake_.wait_for(lock, interval, [this] { return stopping_; })) {
    draw();
    if (!redrawn) interval = kLineInterval;
  }
}

void ProgressLine::draw() {
  const double seconds = seconds_since(started_);
  const auto bytes = static_cast<double>(counters_.bytes.load(std::memory_order_relaxed));
  const auto events = static_cast<double>(counters_.events.load(std::memory_order_relaxed));
  const double rate = seconds > 0 ? bytes / seconds : 0;  // of this process
  const double done = static_cast<double>(start_bytes_) + bytes;
  // (Counted under a million, as a slow stream's few events a second would stay at 0.00 M.)
  const std::string routed = events < 1e6 ? with_commas(static_cast<uint64_t>(events)) + " events"
                                          : fmt::format("{:.2f} M events", events / 1e6);
  std::string line =
      fmt::format("keyshard: {} read, {}, {}/s", human_bytes(done), routed, human_bytes(rate));
  if (total_bytes_ > 0 && rate > 0) {
    const double left = std::max(0.0, static_cast<double>(total_bytes_) - done) / rate;
    fmt::format_to(std::back_inserter(line), ", {:.0f}%, ETA {}:{:02}",
                   std::min(100.0, 100 * done / static_cast<double>(total_bytes_)),
                   static_cast<int>(left) / 60, static_cast<int>(left) % 60);
  }
  draw_status_line(line);
  drawn_ = true;
}

}  // namespace keyshard
