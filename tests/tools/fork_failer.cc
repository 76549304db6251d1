// A preloaded library for tests/cli/exec.sh: with $FAIL_FORK_AT set to N, the Nth fork() of the
// process fails with EAGAIN, as it does when a limit of processes is reached; with
// $FAIL_THREADS_TOO set (not empty) as well, so does every pthread_create() after it, as under such a limit
// (threads count against it too). Every other call is the real one. So a test makes an --exec
// child fail to start after others were started.
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

namespace {
std::atomic<bool> fork_failed{false};
}  // namespace

extern "C" pid_t fork() {
  using Fork = pid_t (*)();
  static const auto real = reinterpret_cast<Fork>(::dlsym(RTLD_NEXT, "fork"));
  static std::atomic<long> calls{0};
  const char* at = std::getenv("FAIL_FORK_AT");
  if (at != nullptr && calls.fetch_add(1) + 1 == std::atol(at)) {
    fork_failed = true;
    errno = EAGAIN;
    return -1;
  }
  return real();
}

extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attributes,
                              void* (*start)(void*), void* argument) {
  using Create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const auto real = reinterpret_cast<Create>(::dlsym(RTLD_NEXT, "pthread_create"));
  const char* threads_too = std::getenv("FAIL_THREADS_TOO");
  if (fork_failed && threads_too != nullptr && *threads_too != '\0') return EAGAIN;
  return real(thread, attributes, start, argument);
}
