// A run with --exec that is stopped (SIGINT, SIGTERM, SIGHUP) ends in order: each child is
// first to take the events it was handed, which may take long (a child that reads slowly) or
// forever (one that does not read). While it waits, after a moment, keyshard says so on stderr, and
// what a second signal does. A signal that came once the whole input was read stops nothing: the
// notice then says that the run finishes, rather than that it was interrupted.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

namespace keyshard {

class InterruptNotice {
 public:
  /// Watches for a signal from now until the destructor (or stop()).
  InterruptNotice();
  ~InterruptNotice();
  InterruptNotice(const InterruptNotice&) = delete;
  InterruptNotice& operator=(const InterruptNotice&) = delete;

  /// The reading is over: `whole`, every input was read to its end (a signal then stops
  /// nothing), else it was stopped by a signal.
  void reading_over(bool whole);
  /// The run is about to end: no notice from here on.
  void stop();

 private:
  void watch();

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool read_whole_ = false;  // reading_over(true) came (guarded by mutex_)
  std::thread thread_;
};

}  // namespace keyshard
