#include "pipeline/interrupt_notice.h"

#include <chrono>
#include <string>

#include "util/interrupt.h"
#include "util/stderr_lines.h"
#include "util/thread_priority.h"

namespace keyshard {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(100);
constexpr auto kPatience = std::chrono::seconds(1);  // an orderly end seldom takes longer

}  // namespace

InterruptNotice::InterruptNotice() : thread_([this] { watch(); }) {}

InterruptNotice::~InterruptNotice() { stop(); }

void InterruptNotice::reading_over(bool whole) {
  const std::lock_guard lock(mutex_);
  read_whole_ = whole;
}

void InterruptNotice::stop() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void InterruptNotice::watch() {
  name_this_thread("ks-notice");
  std::unique_lock lock(mutex_);
  std::chrono::steady_clock::time_point seen{};
  while (!wake_.wait_for(lock, kPoll, [this] { return stopping_; })) {
    if (interrupt_signal() == 0) continue;
    const auto now = std::chrono::steady_clock::now();
    if (seen == std::chrono::steady_clock::time_point{}) {
      seen = now;
    } else if (now - seen >= kPatience) {
      const bool read_whole = read_whole_;
      lock.unlock();  // (stderr may block: stop() must not wait on it)
      const std::string what =
          read_whole ? std::string(interrupt_signal_name(interrupt_signal())) +
                           " came once the whole input was read: the run finishes, waiting"
                     : std::string("interrupted: waiting");
      (void)write_stderr_record(
          "keyshard: " + what +
          " for the children to take the events they were handed and end (a second signal "
          "ends keyshard at once, without waiting for them)\n");
      return;
    }
  }
}

}  // namespace keyshard
