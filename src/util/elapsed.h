// Wall time since a point of a run: for the stage times, the summary and the progress line.
#pragma once

#include <chrono>

namespace keyshard {

using SteadyClock = std::chrono::steady_clock;

/// Seconds from `started` until now.
inline double seconds_since(SteadyClock::time_point started) {
  return std::chrono::duration<double>(SteadyClock::now() - started).count();
}

}  // namespace keyshard
