// The scan that confirms plain object lines from simdjson's structural index. It may only say
// kConfirmed of a valid JSON object without escapes whose -k paths all lead to strings,
// numbers or literals, and must then give the key of the first member of each name; kMissing
// only of a valid object in which a -k path leads nowhere. (That its verdicts agree with the
// DOM parser on many mutated lines is checked by key_extractor_test.cc's block test.)
#include "keys/plain_object_scan.h"

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "keys/key_path.h"

namespace keyshard {
namespace {

std::vector<KeyPath> paths_of(std::initializer_list<std::string_view> specs) {
  std::vector<KeyPath> paths;
  for (const std::string_view spec : specs) {
    KeyPath path;
    REQUIRE(parse_key_path(spec, path).ok());
    paths.push_back(path);
  }
  return paths;
}

struct Result {
  ScanVerdict verdict;
  std::vector<std::string> parts;
};

// Scans `line` as the only line of a window, followed by '\n' and padding; each part is
// reported only when confirmed.
Result scan_alone(std::initializer_list<std::string_view> keys, std::string_view line) {
  const std::vector<KeyPath> paths = paths_of(keys);
  const KeyTrie trie(paths);
  PlainObjectScan scan(trie);
  std::string window(line);
  window += '\n';
  const size_t size = window.size();
  window.append(simdjson::SIMDJSON_PADDING, '\0');
  std::vector<std::string_view> parts(paths.size());
  Result result{ScanVerdict::kUnsure, {}};
  if (!scan.index(window.data(), size)) return result;
  result.verdict = scan.confirm(std::string_view(window.data(), line.size()), parts);
  if (result.verdict == ScanVerdict::kConfirmed) {
    for (const std::string_view part : parts) result.parts.emplace_back(part);
  }
  return result;
}

void check_confirmed(std::initializer_list<std::string_view> keys, std::string_view line,
                     std::vector<std::string> parts) {
  CAPTURE(line);
  const Result result = scan_alone(keys, line);
  CHECK(result.verdict == ScanVerdict::kConfirmed);
  CHECK(result.parts == parts);
}

void check_not_confirmed(std::initializer_list<std::string_view> keys, std::string_view line) {
  CAPTURE(line);
  CHECK(scan_alone(keys, line).verdict != ScanVerdict::kConfirmed);
}

TEST_CASE("plain object lines are confirmed with their key") {
  check_confirmed({"k"}, R"({"k":"v"})", {"v"});
  check_confirmed({"k"}, R"({"a":1,"k":"v","b":[true,false,null,{"c":-0.5e+3}],"d":{}})", {"v"});
  check_confirmed({"k"}, " \t{ \"k\" : \"v\" , \"n\" : 0 }\t \r", {"v"});
  check_confirmed({"k"}, R"({"k":""})", {""});
  check_confirmed({"k"}, "{\"k\":\"\xc3\xa9\xf0\x9f\x98\x80\"}", {"\xc3\xa9\xf0\x9f\x98\x80"});
  check_confirmed({"o.x"}, R"({"o":{"y":1,"x":"in"},"x":"out"})", {"in"});
  check_confirmed({"a.1"}, R"({"a":["zero","one",2]})", {"one"});
  check_confirmed({"a.1"}, R"({"a":{"0":"m","1":"member"}})", {"member"});
  check_confirmed({"k", "o.x"}, R"({"o":{"x":"b"},"k":"a"})", {"a", "b"});
  check_confirmed({"k", "k"}, R"({"k":"same"})", {"same", "same"});
  // The first of duplicate members counts, at every level of the path.
  check_confirmed({"k"}, R"({"k":"first","k":"second"})", {"first"});
  check_confirmed({"o.x"}, R"({"o":{"x":"first o"},"o":{"x":"second o"}})", {"first o"});
}

TEST_CASE("a member name is a -k name only whole, however it is spaced before its colon") {
  for (const std::string_view line : {
           R"({"use":1,"user":2,"user_i":3,"user_idx":4,"user_id":"v"})",
           R"({"resu_id":0,"user_di":1,"":2,"user_id":"v","":3})",  // same size, other bytes
           R"({"user_id" :"v","user_id":"w"})",
           "{\"user_idx\"\t:1,\"user_i\" :2,\"user_id\"  \t: \"v\"}",
       }) {
    check_confirmed({"user_id"}, line, {"v"});
  }
  check_confirmed({"user_id", "o.user_id"},
                  R"({"user_id":"a","o":{"user_idx":1,"user_id" :"b"},"user_id":"c"})",
                  {"a", "b"});
  CHECK(scan_alone({"user_id"}, R"({"user_idx":1,"user_i" :2,"user_idy" : 3})").verdict ==
        ScanVerdict::kMissing);
}

TEST_CASE("a path through a duplicate member follows the first one only") {
  // The first "o" has no "x": the key is missing (the DOM parser says so), not "second o".
  CHECK(scan_alone({"o.x"}, R"({"o":{"y":"no x"},"o":{"x":"second o"}})").verdict ==
        ScanVerdict::kMissing);
  CHECK(scan_alone({"k"}, R"({"k":{"x":1},"k":"second"})").verdict == ScanVerdict::kUnsure);
  check_confirmed({"k"}, R"({"k":1,"k":"second"})", {"1"});
}

TEST_CASE("a number or literal key is its text as it stands") {
  for (const std::string_view value : {"0", "-0", "42", "-12", "1.50", "1E+5", "-1.5e-300",
                                       "123456789012345678901234567890", "1e400", "true",
                                       "false", "null"}) {
    const std::string text(value);
    check_confirmed({"k"}, "{\"k\":" + text + "}", {text});
    check_confirmed({"k"}, "{\"k\" : " + text + " \t,\"a\":1}", {text});
    check_confirmed({"a.1"}, "{\"a\":[\"x\"," + text + "\r]}", {text});
  }
  check_confirmed({"k", "o.x"}, R"({"o":{"x":false},"k":7})", {"7", "false"});
  for (const std::string_view bad : {"01", "-", "1.", "1e", "tru", "nulls", "NaN", "1 2"}) {
    check_not_confirmed({"k"}, "{\"k\":" + std::string(bad) + "}");
  }
}

TEST_CASE("numbers and literals are checked against the grammar") {
  for (const std::string_view good : {"0", "-0", "1", "-12", "1.5", "0.25", "1e5", "1E+5",
                                      "-1.5e-300", "123456789012345678901234567890", "1e400",
                                      "true", "false", "null"}) {
    const std::string line = "{\"k\":\"v\",\"n\":" + std::string(good) + "}";
    check_confirmed({"k"}, line, {"v"});
    check_confirmed({"k"}, "{\"k\":\"v\",\"n\":[" + std::string(good) + " ]}", {"v"});
  }
  for (const std::string_view bad : {"01", "-", "+1", ".5", "1.", "1.e5", "1e", "1e+", "--1",
                                     "0x10", "1f", "tru", "truee", "True", "nul", "nulls",
                                     "fals", "NaN", "Infinity", "1 2", "true false", "- 1"}) {
    check_not_confirmed({"k"}, "{\"k\":\"v\",\"n\":" + std::string(bad) + "}");
    check_not_confirmed({"k"}, "{\"k\":\"v\",\"n\":[" + std::string(bad) + "]}");
  }
}

TEST_CASE("a valid object without the key is known to miss it") {
  for (const auto& [key, line] : std::vector<std::pair<std::string_view, std::string_view>>{
           {"k", "{}"}, {"k", R"({"a":"v","K":1,"k ":2,"kk":3})"}, {"k", R"({"o":{"k":"v"}})"},
           {"o.x", R"({"o":"not an object"})"}, {"o.x", R"({"o":{"y":{"x":1}},"x":2})"},
           {"o.x", R"({"o":[{"x":1}]})"}, {"a.3", R"({"a":[0,1,2]})"}, {"a.b", R"({"a":[0]})"},
           {"k", R"({"s":"\u006b\n","a":"v"})"}}) {
    CAPTURE(line);
    CHECK(scan_alone({key}, line).verdict == ScanVerdict::kMissing);
  }
  // Of a composite key, the parts found are given and the missing one left without data.
  const std::vector<KeyPath> paths = paths_of({"k", "o.x", "a"});
  const KeyTrie trie(paths);
  PlainObjectScan scan(trie);
  std::string window = R"({"k":"v","a":2,"o":{}})" "\n";
  const size_t line_size = window.size() - 1;
  window.append(simdjson::SIMDJSON_PADDING, '\0');
  REQUIRE(scan.index(window.data(), line_size + 1));
  std::vector<std::string_view> parts(3, "stale");
  CHECK(scan.confirm({window.data(), line_size}, parts) == ScanVerdict::kMissing);
  CHECK(parts[0] == "v");
  CHECK(parts[1].data() == nullptr);
  CHECK(parts[2] == "2");
  // A -k name that an escaped member name could spell is left to the parser, not called missing.
  CHECK(scan_alone({"k"}, R"({"\u006b":"v"})").verdict == ScanVerdict::kEscapes);
}

TEST_CASE("lines the scan cannot confirm") {
  for (const std::string_view line : {
           R"({"k":"v")", R"({"k":"v"}})", R"({"k":"v"}])", R"({"k":"v"} {"k":"w"})",
           R"({"k":"v"}{"k":"w"})", R"({"k":"v"} x)", R"({"k":"v"} 1)", R"({"k":"v",})",
           R"({,"k":"v"})", R"({"k":"v",,"a":1})", R"({"k" "v"})", R"({"k"::"v"})",
           R"({"k":"v" "a":1})", R"({"k":"v","a"})", R"({"k":"v","a":})", R"({"k":"v","a":[1,]})",
           R"({"k":"v","a":[,1]})", R"({"k":"v","a":[1 2]})", R"({"k":"v","a":{"b"}})",
           R"({"k":"v","a":{"b":1]})", R"({"k":"v","a":[1}})", R"({"k":"v","a":x})",
           R"({"k":"v"x})", R"({"k":"v","a":"b"c})", R"({"k":"v",1:2})", R"({"k":"v","a":{1}})",
           R"([{"k":"v"}])", R"("k")", "123", "", "   ", "{}", R"({"a":"v"})",
           R"({"k":{"x":"v"}})", R"({"k":["v"]})",
           R"({"o":"not an object"})", "{\"k\":\"v\"}\x0b", "\x0c{\"k\":\"v\"}",
           "{\"k\":\"v\",\"a\":\x01}",
           // in an object on no -k path, before the key
           R"({"o":{"a":"b" "c":1},"k":"v"})", R"({"o":{"a":01},"k":"v"})",
           R"({"o":{"a":"b",},"k":"v"})", R"({"o":{"a"::1},"k":"v"})",
           R"({"o":{"a":"b"}},"k":"v"})", R"({"o":{"a":tru},"k":"v"})",
           R"({"o":{"a":1,"b"},"k":"v"})", R"({"o":{"a":"b",1:2},"k":"v"})"}) {
    check_not_confirmed({"k"}, line);
  }
  check_confirmed({"k"}, R"({"o":{"a":1,"b":"x","c":[1],"d":{"e":true},"f":null},"k":"v"})",
                  {"v"});
  check_not_confirmed({"o.x"}, R"({"o":"not an object"})");
  check_not_confirmed({"a.3"}, R"({"a":[0,1,2]})");
}

TEST_CASE("escape sequences are checked; escaped keys are left to the parser") {
  check_confirmed({"k"}, R"({"k":"v","s":"a\"b\\c\/d\b\f\n\r\t"})", {"v"});
  check_confirmed({"k"}, R"({"s":"\u00e9\u20AC\uffff","k":"v"})", {"v"});
  check_confirmed({"k"}, R"({"s":"\ud83d\ude00","k":"v"})", {"v"});
  check_confirmed({"k"}, R"({"k":"v","o":{"\u006b":"not the key","\"":1}})", {"v"});
  check_confirmed({"k"}, R"({"s":"\\","k":"after"})", {"after"});  // "\\" ends with its quote
  for (const std::string_view line : {
           R"({"k":"v","s":"\x"})", R"({"k":"v","s":"\u12G4"})", R"({"k":"v","s":"\u12"})",
           R"({"k":"v","s":"\ud800"})", R"({"k":"v","s":"\ud800x"})",
           R"({"k":"v","s":"\ud800\u0041"})", R"({"k":"v","s":"\udc00"})",
           R"({"k":"v","s":"\ude00\ud83d"})", R"({"k":"v","s":"\'"})",
           R"({"k":"v","s":"\U0041"})", R"({"k":"\u0076"})", R"({"k":"a\"b"})",
           R"({"\u006b":"v"})", R"({"k\"":1,"k":"v"})"}) {
    CAPTURE(line);
    CHECK(scan_alone({"k"}, line).verdict == ScanVerdict::kEscapes);
  }
  // A backslash outside a string is no escape: the line is not valid.
  for (const std::string_view line : {R"({"k":"v"}\n)", R"({"k":"v",\"a":1})",
                                      R"({"k":"v","a":1\n})", R"(\{"k":"v"})"}) {
    CAPTURE(line);
    CHECK(scan_alone({"k"}, line).verdict != ScanVerdict::kConfirmed);
  }
}

TEST_CASE("stage 1 refuses a window with bad UTF-8, a control character or an open string") {
  for (const std::string_view line : {"{\"k\":\"\xff\"}", "{\"k\":\"\xc0\xaf\"}",
                                      "{\"k\":\"\xed\xa0\x80\"}", "{\"k\":\"a\tb\"}",
                                      "{\"k\":\"a\x01\"}", R"({"k":"open})"}) {
    CAPTURE(line);
    CHECK(scan_alone({"k"}, line).verdict == ScanVerdict::kUnsure);
  }
}

TEST_CASE("nesting deeper than the scan's stack is left to the parser") {
  const auto nested = [](int depth) {
    return "{\"k\":\"v\",\"n\":" + std::string(static_cast<size_t>(depth), '[') +
           std::string(static_cast<size_t>(depth), ']') + "}";
  };
  check_confirmed({"k"}, nested(kMaxScanDepth - 1), {"v"});
  check_not_confirmed({"k"}, nested(kMaxScanDepth));
}

TEST_CASE("-k names the scan cannot match byte for byte make it unusable") {
  const std::vector<KeyPath> quoted = paths_of({"a\"b"});
  const KeyTrie quoted_trie(quoted);
  CHECK_FALSE(PlainObjectScan(quoted_trie).usable());
  const std::vector<KeyPath> plain = paths_of({"a.b", "c"});
  const KeyTrie plain_trie(plain);
  CHECK(PlainObjectScan(plain_trie).usable());
}

TEST_CASE("each line of a window is scanned on its own structurals") {
  const std::vector<KeyPath> paths = paths_of({"k"});
  const KeyTrie trie(paths);
  PlainObjectScan scan(trie);
  // The second, sixth and eighth lines are cut short, each followed by its end: neither half
  // may borrow from the other, not even the members that come after the key, which are only
  // checked against the grammar.
  const std::vector<std::string> lines = {
      R"({"k":"one"})",          R"({"k":"two",)",        R"("a":1})",
      R"({"k":"thr\\ee"})",      R"({"k":"four"})",       R"({"k":"five","o":{"a":"b")",
      R"(,"c":"d"}})",           R"({"k":"six","a":1)",   R"(,"b":"c"})",
      R"({"k":"seven","a":{"b":true,"c":"d","e":[1]},"f":null,"g":"h"})"};
  std::string window;
  std::vector<size_t> starts;
  for (const std::string& line : lines) {
    starts.push_back(window.size());
    window += line + "\n";
  }
  const size_t size = window.size();
  window.append(simdjson::SIMDJSON_PADDING, '\0');
  REQUIRE(scan.index(window.data(), size));
  std::vector<std::string_view> parts(1);
  std::vector<ScanVerdict> verdicts;
  std::vector<std::string> keys;
  for (size_t i = 0; i < lines.size(); ++i) {
    verdicts.push_back(scan.confirm({window.data() + starts[i], lines[i].size()}, parts));
    keys.emplace_back(verdicts.back() == ScanVerdict::kConfirmed ? parts[0] : "-");
  }
  using enum ScanVerdict;
  CHECK(verdicts == std::vector<ScanVerdict>{kConfirmed, kUnsure, kUnsure, kEscapes, kConfirmed,
                                             kUnsure, kUnsure, kUnsure, kUnsure, kConfirmed});
  CHECK(keys == std::vector<std::string>{"one", "-", "-", "-", "four", "-", "-", "-", "-",
                                         "seven"});
}

}  // namespace
}  // namespace keyshard
