// Pins how the choice between reading in place and read() is set: KEYSHARD_READ_IN_PLACE's
// values, the refusal of any other, and the answers of each policy.
#include "input/in_place_probe.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "unit/temp_dir.h"

namespace keyshard {
namespace {

// Sets KEYSHARD_READ_IN_PLACE (or unsets it, for null) for one check, and unsets it after.
class Environment {
 public:
  explicit Environment(const char* value) {
    if (value == nullptr) {
      ::unsetenv("KEYSHARD_READ_IN_PLACE");
    } else {
      ::setenv("KEYSHARD_READ_IN_PLACE", value, 1);
    }
  }
  ~Environment() { ::unsetenv("KEYSHARD_READ_IN_PLACE"); }
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;
};

TEST_CASE("KEYSHARD_READ_IN_PLACE: auto, yes and no; unset or empty is auto") {
  const struct {
    const char* value;
    InPlacePolicy policy;
  } cases[] = {{nullptr, InPlacePolicy::measured},
               {"", InPlacePolicy::measured},
               {"auto", InPlacePolicy::measured},
               {"yes", InPlacePolicy::always},
               {"no", InPlacePolicy::never}};
  for (const auto& [value, expected] : cases) {
    CAPTURE(value == nullptr ? "(unset)" : value);
    const Environment environment(value);
    InPlacePolicy policy = InPlacePolicy::never;
    if (expected == InPlacePolicy::never) policy = InPlacePolicy::always;
    const Status status = in_place_policy_from_environment(policy);
    CHECK(status.ok());
    CHECK(policy == expected);
  }
}

TEST_CASE("any other KEYSHARD_READ_IN_PLACE is refused as a usage error, naming the values") {
  for (const char* value : {"YES", "1", "true", "auto ", "maybe"}) {
    CAPTURE(value);
    const Environment environment(value);
    InPlacePolicy policy = InPlacePolicy::always;
    const Status status = in_place_policy_from_environment(policy);
    REQUIRE_FALSE(status.ok());
    CHECK(status.exit_code() == kExitUsage);
    CHECK(status.message() == "KEYSHARD_READ_IN_PLACE is '" + std::string(value) +
                                  "': use auto (the default), yes or no");
    CHECK(policy == InPlacePolicy::always);  // left as it was
  }
}

// (Before any test that measures: the answer, once measured, holds for the whole process.)
TEST_CASE("measured: a file that shrank since it was opened is not measured, and stays readable") {
  const TempDir dir;
  const std::string path = dir.write("shrinking", std::string(2u << 20, 'x'));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(::truncate(path.c_str(), 100000) == 0);
  set_in_place_policy(InPlacePolicy::measured);
  // Measuring would map what the file no longer holds, and end the process with SIGBUS. The
  // answer is left to view(), which finds the file shorter and reads it.
  CHECK(read_in_place_pays(fd, path, 2u << 20));
  ::close(fd);
}

TEST_CASE("yes and no answer without measuring; measured answers the same for every file") {
  const TempDir dir;
  const std::string big = dir.write("big", std::string(1u << 20, 'x'));
  const std::string small = dir.write("small", std::string(100, 'x'));
  const int fd = ::open(big.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  set_in_place_policy(InPlacePolicy::always);
  CHECK(read_in_place_pays(fd, big, 1u << 20));
  set_in_place_policy(InPlacePolicy::never);
  CHECK_FALSE(read_in_place_pays(fd, big, 1u << 20));
  set_in_place_policy(InPlacePolicy::measured);
  const bool pays = read_in_place_pays(fd, big, 1u << 20);
  for (int again = 0; again < 3; ++again) CHECK(read_in_place_pays(fd, big, 1u << 20) == pays);
  const int small_fd = ::open(small.c_str(), O_RDONLY | O_CLOEXEC);  // too small to measure
  REQUIRE(small_fd >= 0);
  CHECK(read_in_place_pays(small_fd, small, 100) == pays);
  ::close(small_fd);
  ::close(fd);
}

}  // namespace
}  // namespace keyshard
