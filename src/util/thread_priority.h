// The worker threads' names and scheduling priority. The reader is the pipeline's one serial
// stage (it decompresses a zstd input): when both cores are busy, a worker that waits loses
// nothing it cannot catch up on, but a reader that waits stalls every worker after it. So the
// workers run ten nice levels below the rest of keyshard, relative to whatever priority
// keyshard was started with (nice(1) still applies to the whole run).
#pragma once

#include <string>

namespace keyshard {

/// How many nice levels the workers run below the reader.
inline constexpr int kWorkerNiceSteps = 10;

/// Names the calling thread as `top -H` and /proc/PID/task/TID/comm show it (15 bytes at most).
void name_this_thread(const std::string& name);

/// Lowers the calling thread's priority by `steps` nice levels, to 19 at most. Best effort: on
/// failure the priority stays as it was.
void lower_this_thread_priority(int steps);

}  // namespace keyshard
