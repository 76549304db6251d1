#include "util/thread_priority.h"

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace keyshard {

void name_this_thread(const std::string& name) {
  (void)::pthread_setname_np(::pthread_self(), name.substr(0, 15).c_str());
}

void lower_this_thread_priority(int steps) {
  // On Linux, PRIO_PROCESS with a thread id is that thread's nice level alone.
  const auto thread = static_cast<id_t>(::gettid());
  errno = 0;
  const int nice = ::getpriority(PRIO_PROCESS, thread);
  if (nice == -1 && errno != 0) return;
  (void)::setpriority(PRIO_PROCESS, thread, std::min(19, nice + steps));
}

}  // namespace keyshard
