// A preloaded library for tests/cli/out_of_memory.sh: with $FAIL_NOTHROW_NEW_FROM set to N, every
// `new (std::nothrow)` of N bytes or more returns null, as it does when memory runs out (under
// ulimit -v, say) for the large blocks only. simdjson allocates its buffers that way, so a test
// makes them fail where they are largest (a window of lines) while a single line's still fit.
// Every other call is the real one.
#include <dlfcn.h>

#include <cstddef>
#include <cstdlib>
#include <new>

namespace {

using NothrowNew = void* (*)(std::size_t, const std::nothrow_t&);

bool fails(std::size_t size) {
  static const char* from = std::getenv("FAIL_NOTHROW_NEW_FROM");
  return from != nullptr && size >= static_cast<std::size_t>(std::atoll(from));
}

}  // namespace

void* operator new(std::size_t size, const std::nothrow_t& tag) noexcept {
  static const auto real = reinterpret_cast<NothrowNew>(::dlsym(RTLD_NEXT, "_ZnwmRKSt9nothrow_t"));
  return fails(size) ? nullptr : real(size, tag);
}

void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept {
  static const auto real = reinterpret_cast<NothrowNew>(::dlsym(RTLD_NEXT, "_ZnamRKSt9nothrow_t"));
  return fails(size) ? nullptr : real(size, tag);
}
