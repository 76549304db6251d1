// Pins what populate() does to a window: its pages mapped in one call, and nothing raised for
// the part of a window that a file which shrank no longer holds.
#include "input/mapped_window.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "unit/in_child.h"
#include "unit/temp_dir.h"

namespace keyshard {
namespace {

constexpr size_t kWindowBytes = 1u << 20;

// The resident size, in KiB, of the mapping at `address`, as /proc/self/smaps gives it.
long resident_kib(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(address);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t begin = 0;
    uintptr_t end = 0;
    char dash = 0;
    std::istringstream fields(line);
    if (fields >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = at >= begin && at < end;
    } else if (inside && line.rfind("Rss:", 0) == 0) {
      return std::stol(line.substr(4));
    }
  }
  return -1;
}

TEST_CASE("populate maps every page of a window in the page cache, which a touch would fault") {
  TempDir dir;
  const std::string path = dir.write("events.ndjson", std::string(kWindowBytes, 'x'));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  {
    const auto window = MappedWindow::map(fd, path, 0, kWindowBytes);
    REQUIRE(window != nullptr);
    CHECK(resident_kib(window->data()) == 0);
    window->populate();
    CHECK(resident_kib(window->data()) == static_cast<long>(kWindowBytes / 1024));
    CHECK(window->data()[kWindowBytes - 1] == 'x');
  }
  ::close(fd);
}

TEST_CASE("populate of a window past the end of a file that shrank raises nothing") {
  TempDir dir;
  const std::string path = dir.write("events.ndjson", std::string(kWindowBytes, 'x'));
  const int status = in_child([&] {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return 2;
    const auto window = MappedWindow::map(fd, path, 0, kWindowBytes);
    if (window == nullptr || ::ftruncate(fd, 4096) != 0) return 3;
    window->populate();  // (the pages past the new end stay unmapped)
    return window->data()[0] == 'x' ? 0 : 4;
  });
  CHECK(status == 0);
}

}  // namespace
}  // namespace keyshard
