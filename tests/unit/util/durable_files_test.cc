// make_durable(): fsyncs the files and directories it is given (a file it may only write too),
// passes over what cannot be synced (pipes, devices) without waiting on it, and names the first
// path it could not open.
#include "util/durable_files.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "../in_child.h"
#include "../temp_dir.h"

namespace keyshard {
namespace {

TEST_CASE("make_durable syncs files and directories, and passes over devices and pipes") {
  TempDir dir;
  const std::string fifo = dir.path() + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // No process has the FIFO open: opening it to write, or to read without O_NONBLOCK, would
  // wait for one.
  const std::vector<std::string> paths = {dir.write("a", "one\n"), dir.write("b", ""),
                                          "/dev/null", fifo, dir.path()};
  const Status status = make_durable(paths);
  CHECK_MESSAGE(status.ok(), status.message());
  CHECK(make_durable({}).ok());
}

TEST_CASE("make_durable names the first path it cannot open, from one thread or many") {
  TempDir dir;
  for (const size_t count : {size_t{3}, size_t{300}}) {  // 300: synced from several threads
    std::vector<std::string> paths;
    for (size_t i = 0; i < count; ++i) {
      std::string name = std::to_string(i);
      name += ".txt";
      paths.push_back(dir.write(name, std::string(i % 5000, 'x')));
    }
    REQUIRE(make_durable(paths).ok());
    // Removed after the first pass of a run would look the same: the file is gone.
    const size_t first = count / 3, second = count - 1;
    REQUIRE(::unlink(paths[second].c_str()) == 0);
    REQUIRE(::unlink(paths[first].c_str()) == 0);
    const Status status = make_durable(paths);
    REQUIRE_FALSE(status.ok());
    CHECK(status.where() == paths[first]);
    CHECK(status.reason() == "cannot open to sync: No such file or directory");
  }
}

TEST_CASE("make_durable syncs a file it may write but not read (mode 0200)") {
  TempDir dir;
  const std::string file = dir.write("write-only", "one\n");
  REQUIRE(::chmod(file.c_str(), 0200) == 0);
  // Root reads every file, so a child run as root becomes another user first.
  const int status = in_child([&] {
    constexpr uid_t kNobody = 65534;
    if (::geteuid() == 0 &&
        (::chown(dir.path().c_str(), kNobody, kNobody) != 0 ||
         ::chown(file.c_str(), kNobody, kNobody) != 0 || ::setgroups(0, nullptr) != 0 ||
         ::setresgid(kNobody, kNobody, kNobody) != 0 ||
         ::setresuid(kNobody, kNobody, kNobody) != 0)) {
      return 3;
    }
    const int readable = ::open(file.c_str(), O_RDONLY);
    if (readable >= 0 || errno != EACCES) return 2;
    return make_durable({file}).ok() ? 0 : 1;
  });
  if (status == 3) {
    // Root without the capabilities to become another user (a container that dropped them).
    MESSAGE("not checked: root here cannot become another user, and reads every file");
    return;
  }
  CHECK_MESSAGE(status != 2, "the file could be opened for reading: nothing was checked");
  CHECK(status == 0);
}

}  // namespace
}  // namespace keyshard
