// Pins how `-k` values become key paths: dotted paths with their `\.` and `\\` escapes, JSON
// Pointers (RFC 6901) with `~0` and `~1`, which components also select array elements, and which
// spellings are refused as usage errors. Field numbers for --format delimited are checked too.
#include "keys/key_path.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace keyshard {
namespace {

// `text` in double quotes, as messages quote a spelling.
std::string quoted(std::string_view text) {
  std::string out = "\"";
  out += text;
  out += '"';
  return out;
}

// One expected component: its unescaped name and its array index, if any.
struct Expected {
  std::string name;
  std::optional<uint64_t> index;
};

// Parses `spec`, requires success, and compares every component with `expected`.
void check_parses_to(std::string_view spec, const std::vector<Expected>& expected) {
  INFO("spec: '", std::string(spec), "'");
  KeyPath path;
  const Status status = parse_key_path(spec, path);
  INFO("status: ", status.message());
  REQUIRE(status.ok());
  CHECK(path.spelling == spec);
  REQUIRE(path.components.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    CHECK(path.components[i].name == expected[i].name);
    CHECK(path.components[i].array_index == expected[i].index);
  }
}

// Parses `spec` and requires a usage error whose message contains `fragment`.
void check_refused(std::string_view spec, std::string_view fragment) {
  INFO("spec: '", std::string(spec), "'");
  KeyPath path;
  const Status status = parse_key_path(spec, path);
  INFO("status: ", status.message());
  REQUIRE_FALSE(status.ok());
  CHECK(status.exit_code() == kExitUsage);
  CHECK_FALSE(status.quiet());
  CHECK(status.reason().find(fragment) != std::string::npos);
  // The spelling is quoted in the message so the user sees which -k was wrong.
  CHECK(status.reason().find(quoted(spec)) != std::string::npos);
}

}  // namespace

TEST_CASE("a plain name is one component without an array index") {
  check_parses_to("user_id", {{"user_id", std::nullopt}});
  check_parses_to("x", {{"x", std::nullopt}});
  check_parses_to("Ünïcode-名前", {{"Ünïcode-名前", std::nullopt}});
  check_parses_to("with space", {{"with space", std::nullopt}});
}

TEST_CASE("a dotted path splits at each unescaped dot") {
  check_parses_to("account.id", {{"account", std::nullopt}, {"id", std::nullopt}});
  check_parses_to("a.b.c.d", {{"a", std::nullopt},
                              {"b", std::nullopt},
                              {"c", std::nullopt},
                              {"d", std::nullopt}});
}

TEST_CASE("a canonical non-negative integer component also carries an array index") {
  check_parses_to("tags.0", {{"tags", std::nullopt}, {"0", 0}});
  check_parses_to("tags.12", {{"tags", std::nullopt}, {"12", 12}});
  check_parses_to("0", {{"0", 0}});
  check_parses_to("7.3", {{"7", 7}, {"3", 3}});
  check_parses_to("a.999999999999999999", {{"a", std::nullopt},
                                           {"999999999999999999", 999999999999999999ull}});
}

TEST_CASE("a non-canonical number is only a member name") {
  // Leading zeros, signs, fractions, exponents and hex are names, never indices.
  for (const std::string_view name : {"01", "00", "-1", "+1", "1e3", "0x1", " 1", "1 ", "1a"}) {
    CAPTURE(name);
    check_parses_to(std::string("a.") + std::string(name),
                    {{"a", std::nullopt}, {std::string(name), std::nullopt}});
  }
  // "1.5" with an escaped dot is one member named "1.5", not an index.
  check_parses_to("a.1\\.5", {{"a", std::nullopt}, {"1.5", std::nullopt}});
  check_parses_to("/a/1.5", {{"a", std::nullopt}, {"1.5", std::nullopt}});
}

TEST_CASE("a backslash-escaped dot is a literal dot in the member name") {
  check_parses_to("a\\.b", {{"a.b", std::nullopt}});
  check_parses_to("a\\.b.c", {{"a.b", std::nullopt}, {"c", std::nullopt}});
  check_parses_to("\\.", {{".", std::nullopt}});
  check_parses_to("\\.\\.", {{"..", std::nullopt}});
  check_parses_to("x.\\.hidden", {{"x", std::nullopt}, {".hidden", std::nullopt}});
  check_parses_to("trailing\\.", {{"trailing.", std::nullopt}});
}

TEST_CASE("a double backslash is one literal backslash") {
  check_parses_to("a\\\\b", {{"a\\b", std::nullopt}});
  // `a\\.b`: the backslash pair is one backslash, then the dot separates.
  check_parses_to("a\\\\.b", {{"a\\", std::nullopt}, {"b", std::nullopt}});
  // `a\\\.b`: one backslash, then an escaped dot.
  check_parses_to("a\\\\\\.b", {{"a\\.b", std::nullopt}});
}

TEST_CASE("a backslash before any other character stays a backslash") {
  check_parses_to("a\\b", {{"a\\b", std::nullopt}});
  check_parses_to("a\\", {{"a\\", std::nullopt}});
  check_parses_to("\\n", {{"\\n", std::nullopt}});
}

TEST_CASE("an empty dotted component is refused with a hint about \\.") {
  check_refused("a..b", "empty path component");
  check_refused("a..b", "\\.");
  check_refused(".a", "empty path component at character 1");
  check_refused("a.", "empty path component at character 3");
  check_refused("a..b", "empty path component at character 3");
  check_refused(".", "empty path component");
  check_refused("..", "empty path component");
}

TEST_CASE("an empty key is refused as a usage error") {
  KeyPath path;
  path.components.push_back({"stale", std::nullopt});
  const Status status = parse_key_path("", path);
  INFO("status: ", status.message());
  REQUIRE_FALSE(status.ok());
  CHECK(status.exit_code() == kExitUsage);
  CHECK(status.reason().find("invalid key") != std::string::npos);
}

TEST_CASE("a JSON Pointer splits at each slash") {
  check_parses_to("/account/id", {{"account", std::nullopt}, {"id", std::nullopt}});
  check_parses_to("/user_id", {{"user_id", std::nullopt}});
  check_parses_to("/tags/0", {{"tags", std::nullopt}, {"0", 0}});
  check_parses_to("/tags/01", {{"tags", std::nullopt}, {"01", std::nullopt}});
  check_parses_to("/tags/-", {{"tags", std::nullopt}, {"-", std::nullopt}});
  // Dots and backslashes are ordinary characters in a JSON Pointer.
  check_parses_to("/a.b/c\\d", {{"a.b", std::nullopt}, {"c\\d", std::nullopt}});
}

TEST_CASE("a JSON Pointer \"/\" names the member with the empty name") {
  check_parses_to("/", {{"", std::nullopt}});
  check_parses_to("//", {{"", std::nullopt}, {"", std::nullopt}});
  check_parses_to("/a/", {{"a", std::nullopt}, {"", std::nullopt}});
  check_parses_to("//a", {{"", std::nullopt}, {"a", std::nullopt}});
}

TEST_CASE("a JSON Pointer unescapes ~1 to a slash and ~0 to a tilde") {
  check_parses_to("/a~1b", {{"a/b", std::nullopt}});
  check_parses_to("/a~0b", {{"a~b", std::nullopt}});
  check_parses_to("/~1", {{"/", std::nullopt}});
  check_parses_to("/~0", {{"~", std::nullopt}});
  // RFC 6901: ~01 is "~1" (unescape ~1 after ~0 would wrongly give "/").
  check_parses_to("/~01", {{"~1", std::nullopt}});
  check_parses_to("/~10", {{"/0", std::nullopt}});
  check_parses_to("/~0~1/~1~0", {{"~/", std::nullopt}, {"/~", std::nullopt}});
}

TEST_CASE("a JSON Pointer with a bare or invalid ~ escape is refused") {
  check_refused("/~2", "'~' must be followed by 0 or 1");
  check_refused("/a~", "'~' must be followed by 0 or 1");
  check_refused("/~", "'~' must be followed by 0 or 1");
  check_refused("/a/b~x", "'~' must be followed by 0 or 1");
  check_refused("/~~0", "'~' must be followed by 0 or 1");
}

TEST_CASE("a tilde in a dotted path is an ordinary character") {
  check_parses_to("a~2.b~", {{"a~2", std::nullopt}, {"b~", std::nullopt}});
}

TEST_CASE("parse_key_path resets the path it fills") {
  KeyPath path;
  REQUIRE(parse_key_path("a.b.c", path).ok());
  REQUIRE(path.components.size() == 3);
  REQUIRE(parse_key_path("x", path).ok());
  CHECK(path.spelling == "x");
  REQUIRE(path.components.size() == 1);
  CHECK(path.components[0].name == "x");
}

TEST_CASE("parse_field_number accepts 1-based field numbers") {
  struct Vector {
    std::string_view spec;
    uint32_t field;
  };
  const Vector vectors[] = {{"1", 1}, {"3", 3}, {"10", 10}, {"4294967295", 4294967295u}};
  for (const auto& vector : vectors) {
    CAPTURE(vector.spec);
    uint32_t field = 0;
    const Status status = parse_field_number(vector.spec, field);
    INFO("status: ", status.message());
    REQUIRE(status.ok());
    CHECK(field == vector.field);
  }
}

TEST_CASE("parse_field_number refuses 0, signs, junk and overflow as usage errors") {
  for (const std::string_view spec : {"0", "", "-1", "+1", "a", "1a", "1 ", " 1", "1.0", "1e2",
                                      "0x1", "4294967296", "99999999999999999999", "user_id"}) {
    CAPTURE(spec);
    uint32_t field = 0;
    const Status status = parse_field_number(spec, field);
    INFO("status: ", status.message());
    REQUIRE_FALSE(status.ok());
    CHECK(status.exit_code() == kExitUsage);
    CHECK(status.reason().find("counted from 1") != std::string::npos);
    CHECK(status.reason().find(quoted(spec)) != std::string::npos);
  }
}

}  // namespace keyshard
