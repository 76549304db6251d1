// A preloaded library for tests/cli/exec.sh: with $FAIL_FORK_AT set to N, the Nth fork() of the
// process fails with EAGAIN, as it does when a limit of processes is reached; every other call
// is the real one. So a test makes an --exec child fail to start after others were started.
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

extern "C" pid_t fork() {
  using Fork = pid_t (*)();
  static const auto real = reinterpret_cast<Fork>(::dlsym(RTLD_NEXT, "fork"));
  static std::atomic<long> calls{0};
  const char* at = std::getenv("FAIL_FORK_AT");
  if (at != nullptr && calls.fetch_add(1) + 1 == std::atol(at)) {
    errno = EAGAIN;
    return -1;
  }
  return real();
}
