// Pins what key bytes each line gives (DESIGN.md §2 "Events and keys"): a JSON string gives its
// unescaped UTF-8, any other value its raw text as written; the first of duplicate members wins;
// composite keys are joined by 0x1F; and every other line is a bad line with the right reason.
// JSON cases run with validation on and off. A differential test compares the validating
// extractor with a small independent strict JSON parser written here, on many mutated lines.
#include "keys/key_extractor.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "keys/json_path_walker.h"
#include "keys/key_path.h"

namespace keyshard {
namespace {

// What follows a line in its readable padding. A chunk holds '\n' and the next line there, so
// an extractor that read past the end of its line would change its answer.
enum class Padding { kZeros, kNextLine };

// A line followed by kLinePadding readable bytes, as the chunk reader hands lines over.
class PaddedLine {
 public:
  explicit PaddedLine(std::string_view text, Padding padding = Padding::kZeros)
      : size_(text.size()) {
    storage_.assign(text);
    if (padding == Padding::kZeros) {
      storage_.append(kLinePadding, '\0');
    } else {
      std::string after;
      while (after.size() < kLinePadding) after += "\n{\"k\":\"NEXT\",\"o\":{\"x\":1}} \"]";
      storage_.append(after, 0, kLinePadding);
    }
  }
  std::string_view line() const { return {storage_.data(), size_}; }
  size_t readable() const { return storage_.size(); }

 private:
  std::string storage_;
  size_t size_;
};

// An Extraction with its views copied, so it outlives the line and the extractor's next call.
struct Outcome {
  bool ok = false;
  BadReason reason = BadReason::kInvalidJson;
  std::string detail;
  std::string key;
};

Outcome outcome_of(const Extraction& extraction) {
  return {extraction.ok, extraction.reason, std::string(extraction.detail),
          extraction.ok ? std::string(extraction.key) : std::string()};
}

Outcome run(KeyExtractor& extractor, std::string_view text, Padding padding = Padding::kZeros) {
  const PaddedLine padded(text, padding);
  return outcome_of(extractor.extract(padded.line(), padded.readable()));
}

// Key bytes made printable for failure messages: non-ASCII and control bytes as \xNN.
std::string printable(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f && byte != '\\') {
      out.push_back(c);
    } else {
      out += "\\x";
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xf]);
    }
  }
  return out;
}

std::string describe(const Outcome& outcome) {
  if (outcome.ok) return "key '" + printable(outcome.key) + "'";
  return "bad line: " + std::string(bad_reason_name(outcome.reason)) + " (" + outcome.detail + ")";
}

std::vector<KeyPath> key_paths(const std::vector<std::string_view>& keys) {
  std::vector<KeyPath> paths;
  for (const auto key : keys) {
    KeyPath path;
    const Status status = parse_key_path(key, path);
    INFO("-k ", std::string(key), ": ", status.message());
    REQUIRE(status.ok());
    paths.push_back(std::move(path));
  }
  return paths;
}

// `tree_line_limit` 0 sends every line to the grammar checker, as lines past the limit go.
KeySpec json_spec(const std::vector<std::string_view>& keys, bool validate,
                  size_t tree_line_limit = kTreeLineLimit) {
  KeySpec spec;
  spec.format = InputFormat::kJson;
  spec.paths = key_paths(keys);
  spec.validate = validate;
  spec.tree_line_limit = tree_line_limit;
  return spec;
}

KeySpec delimited_spec(std::vector<uint32_t> fields, char delimiter) {
  KeySpec spec;
  spec.format = InputFormat::kDelimited;
  spec.fields = std::move(fields);
  spec.delimiter = delimiter;
  return spec;
}

KeySpec line_spec() {
  KeySpec spec;
  spec.format = InputFormat::kLine;
  return spec;
}

// Which validation modes a JSON expectation holds for.
enum class Modes { kBoth, kValidateOnly };

struct Mode {
  bool validate;
  size_t tree_line_limit;
};
std::ostream& operator<<(std::ostream& out, const Mode& mode) {
  return out << (mode.validate ? "validating" : "not validating")
             << (mode.tree_line_limit == 0 ? ", grammar checker" : "");
}

// The lines of each mode: validated by the DOM parser, not validated, and (as if too long for
// the tree) checked by the grammar checker, with or without --no-validate.
std::vector<Mode> modes_of(Modes modes) {
  std::vector<Mode> all = {{true, kTreeLineLimit}, {true, 0}, {false, 0}};
  if (modes == Modes::kBoth) all.push_back({false, kTreeLineLimit});
  return all;
}

// The key of `line` under -k `keys` must be `expected`, in each mode.
void check_json_key(const std::vector<std::string_view>& keys, std::string_view line,
                    std::string_view expected, Modes modes = Modes::kBoth) {
  for (const Mode mode : modes_of(modes)) {
    KeyExtractor extractor(json_spec(keys, mode.validate, mode.tree_line_limit));
    for (const Padding padding : {Padding::kZeros, Padding::kNextLine}) {
      const Outcome outcome = run(extractor, line, padding);
      INFO("line: ", printable(line));
      INFO("mode: ", mode, ", got ", describe(outcome));
      INFO("expected key '", printable(expected), "'");
      CHECK(outcome.ok);
      CHECK(outcome.key == expected);
    }
  }
}

// `line` must be a bad line for `reason` under -k `keys`, in each mode; returns the detail.
std::string check_json_bad(const std::vector<std::string_view>& keys, std::string_view line,
                           BadReason reason, Modes modes = Modes::kBoth) {
  std::string detail;
  for (const Mode mode : modes_of(modes)) {
    KeyExtractor extractor(json_spec(keys, mode.validate, mode.tree_line_limit));
    for (const Padding padding : {Padding::kZeros, Padding::kNextLine}) {
      const Outcome outcome = run(extractor, line, padding);
      INFO("line: ", printable(line));
      INFO("mode: ", mode, ", got ", describe(outcome));
      INFO("expected bad line: ", std::string(bad_reason_name(reason)));
      CHECK_FALSE(outcome.ok);
      CHECK(outcome.reason == reason);
      detail = outcome.detail;
    }
  }
  return detail;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// JSON strings: the unescaped UTF-8 bytes
// ---------------------------------------------------------------------------------------------

TEST_CASE("a JSON string key is its content without the quotes") {
  check_json_key({"user_id"}, R"({"user_id":"user_1"})", "user_1");
  check_json_key({"user_id"}, R"({"user_id":""})", "");
  check_json_key({"user_id"}, R"({ "user_id" : "user 1" , "x" : 2 })", "user 1");
  check_json_key({"user_id"}, R"({"a":1,"b":[2,3],"user_id":"u"})", "u");
}

TEST_CASE("a JSON string key is unescaped: \\\" \\\\ \\/ \\b \\f \\n \\r \\t") {
  check_json_key({"k"}, R"({"k":"a\"b"})", "a\"b");
  check_json_key({"k"}, R"({"k":"a\\b"})", "a\\b");
  check_json_key({"k"}, R"({"k":"a\/b"})", "a/b");
  check_json_key({"k"}, R"({"k":"\b\f\n\r\t"})", "\b\f\n\r\t");
  check_json_key({"k"}, R"({"k":"\\\"\\"})", "\\\"\\");
  check_json_key({"k"}, R"({"k":"\\u0041"})", "\\u0041");
}

TEST_CASE("a JSON string key decodes \\u escapes to UTF-8, surrogate pairs to one character") {
  check_json_key({"k"}, R"({"k":"\u0041"})", "A");
  check_json_key({"k"}, R"({"k":"caf\u00e9"})", "caf\xc3\xa9");
  check_json_key({"k"}, R"({"k":"caf\u00E9"})", "caf\xc3\xa9");
  check_json_key({"k"}, R"({"k":"\u540d"})", "\xe5\x90\x8d");
  check_json_key({"k"}, R"({"k":"\uffff"})", "\xef\xbf\xbf");
  check_json_key({"k"}, R"({"k":"\ud83d\ude00"})", "\xf0\x9f\x98\x80");
  check_json_key({"k"}, R"({"k":"x\uD83D\uDE00y"})", "x\xf0\x9f\x98\x80y");
  check_json_key({"k"}, R"({"k":"\udbff\udfff"})", "\xf4\x8f\xbf\xbf");
  check_json_key({"k"}, R"({"k":"a\u0000b"})", std::string_view("a\0b", 3));
  check_json_key({"k"}, R"({"k":"\u001f"})", "\x1f");
}

TEST_CASE("a JSON string key passes raw UTF-8 through unchanged") {
  check_json_key({"k"}, "{\"k\":\"caf\xc3\xa9 \xe5\x90\x8d \xf0\x9f\x98\x80\"}",
                 "caf\xc3\xa9 \xe5\x90\x8d \xf0\x9f\x98\x80");
  check_json_key({"k"}, "{\"k\":\"\x7f\"}", "\x7f");  // DEL needs no escape in JSON
}

// ---------------------------------------------------------------------------------------------
// Other JSON values: the raw text as written
// ---------------------------------------------------------------------------------------------

TEST_CASE("a JSON number key is its raw text exactly") {
  for (const std::string_view number :
       {"42", "0", "-0", "1.50", "1e3", "1E+3", "-1.5e-7", "0.0", "-0.0e-0", "9007199254740993",
        "18446744073709551615", "-9223372036854775808", "1e308", "5e-324"}) {
    CAPTURE(number);
    check_json_key({"k"}, "{\"k\":" + std::string(number) + "}", number);
    check_json_key({"k"}, "{\"k\": " + std::string(number) + " ,\"z\":1}", number);
  }
}

TEST_CASE("numbers too large for simdjson's tree are valid JSON and keep their raw text") {
  const std::string big = "12345678901234567890123";
  check_json_key({"k"}, "{\"k\":" + big + "}", big);
  check_json_key({"k"}, "{\"k\":-" + big + "}", "-" + big);
  check_json_key({"k"}, "{\"k\":18446744073709551616}", "18446744073709551616");
  check_json_key({"k"}, "{\"k\":1e400}", "1e400");
  check_json_key({"k"}, "{\"k\":-1e400}", "-1e400");
  check_json_key({"k"}, "{\"k\":3.14159265358979323846264338327950288}",
                 "3.14159265358979323846264338327950288");
  // A big number elsewhere in the line does not make the line bad.
  check_json_key({"k"}, "{\"big\":" + big + ",\"k\":\"v\"}", "v");
  check_json_key({"k"}, "{\"k\":\"v\",\"big\":[" + big + ",1e999]}", "v");
  check_json_key({"k"}, "{\"k\":\"a\\nb\",\"big\":" + big + "}", "a\nb");
  check_json_key({"k"}, "{\"k\":{\"n\":" + big + "},\"big\":" + big + "}", "{\"n\":" + big + "}");
}

TEST_CASE("true, false and null keys are their literal text") {
  check_json_key({"k"}, R"({"k":true})", "true");
  check_json_key({"k"}, R"({"k":false})", "false");
  check_json_key({"k"}, R"({"k":null})", "null");
  check_json_key({"k"}, R"({"k" : null , "z":1})", "null");
}

TEST_CASE("a number, true, false or null key that is not a valid token is a bad line, "
          "validated or not") {
  for (const std::string_view line : {R"({"k":tru})", R"({"k":truex})", R"({"k":nul, "a":1})",
                                      R"({"k":-})", R"({"k":1e})", R"({"k":1.})", R"({"k":01})",
                                      R"({"k":1.5e+})", R"({"k":-a})"}) {
    check_json_bad({"k"}, line, BadReason::kInvalidJson);
  }
  // Valid ones, next to them, are keys in both modes.
  check_json_key({"k"}, R"({"k":-0.5e+3})", "-0.5e+3");
  check_json_key({"k"}, R"({"k":0})", "0");
}

TEST_CASE("nesting is refused at the same depth by simdjson and by the grammar checker") {
  // Depth counts the top-level object; an empty object or array adds none. 1023 levels of
  // non-empty containers pass, 1024 do not.
  auto nested = [](int depth, bool empty_innermost) {
    const int arrays = depth - 1;
    return R"({"k":"v","z":)" + std::string(static_cast<size_t>(arrays), '[') +
           (empty_innermost ? "" : "1") + std::string(static_cast<size_t>(arrays), ']') + "}";
  };
  check_json_key({"k"}, nested(1023, false), "v", Modes::kValidateOnly);
  check_json_bad({"k"}, nested(1024, false), BadReason::kInvalidJson, Modes::kValidateOnly);
  check_json_key({"k"}, nested(1024, true), "v", Modes::kValidateOnly);
  check_json_bad({"k"}, nested(1025, true), BadReason::kInvalidJson, Modes::kValidateOnly);
}

TEST_CASE("object and array keys are their raw text as written, inner spaces included") {
  check_json_key({"k"}, R"({"k": {"a": [1, 2]} , "z":1})", R"({"a": [1, 2]})");
  check_json_key({"k"}, R"({"k":[1,2,3]})", "[1,2,3]");
  check_json_key({"k"}, R"({"k":{}})", "{}");
  check_json_key({"k"}, R"({"k":[]})", "[]");
  check_json_key({"k"}, R"({"k":[ ]})", "[ ]");
  check_json_key({"k"}, "{\"k\":\t[ 1 ,\t{\"x\" : \"y\\n\"} ]\t}", "[ 1 ,\t{\"x\" : \"y\\n\"} ]");
  check_json_key({"k"}, R"({"k":{"a":{"b":{"c":[[[]]]}}},"z":[{"k":1}]})",
                 R"({"a":{"b":{"c":[[[]]]}}})");
  check_json_key({"k"}, R"({"z":0,"k":["s","\u00e9",null]})", R"(["s","\u00e9",null])");
}

// ---------------------------------------------------------------------------------------------
// Paths
// ---------------------------------------------------------------------------------------------

TEST_CASE("a dotted path walks into nested objects") {
  check_json_key({"account.id"}, R"({"account":{"id":"acc-1"}})", "acc-1");
  check_json_key({"account.id"}, R"({"id":"top","account":{"name":"n","id":7}})", "7");
  check_json_key({"a.b.c"}, R"({"a":{"b":{"c":"deep"}}})", "deep");
  check_json_key({"a.b"}, R"({"a":{"b":{"c":[1]}}})", R"({"c":[1]})");
}

TEST_CASE("a numeric path component selects an array element by index") {
  check_json_key({"tags.0"}, R"({"tags":["red","green"]})", "red");
  check_json_key({"tags.1"}, R"({"tags":["red","green"]})", "green");
  check_json_key({"tags.1.x"}, R"({"tags":[{"x":1},{"x":"two"}]})", "two");
  check_json_key({"m.0.1"}, R"({"m":[[1,2],[3,4]]})", "2");
  check_json_key({"tags.0"}, R"({"tags":[[1, 2],3]})", "[1, 2]");
  // On an object, the same component is a member name.
  check_json_key({"tags.0"}, R"({"tags":{"1":"one","0":"zero"}})", "zero");
}

TEST_CASE("an invalid line's detail names its fault, the same in every mode") {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {R"({"k":1}garbage)", "content after the JSON value"},
      {R"({"k":"a"} x)", "content after the JSON value"},
      {"{\"k\":\"a\"}\r{\"k\":\"b\"}\r{\"k\":\"c\"",
       "content after the JSON value, past a carriage return (are the lines ended by CR alone?)"},
      {R"({"k":"a)", "unclosed string"},
      {R"({"k":tru})", "invalid literal"},
      {R"({"a":1,,"k":2})", "expected a member name"},
      {"\xEF\xBB\xBF{\"k\":1}", "a byte order mark (U+FEFF) before the JSON value"},
  };
  for (const auto& [line_text, expected] : cases) {
    const auto& line = line_text;  // (clang 14 cannot capture a structured binding in INFO)
    for (const Mode mode : modes_of(Modes::kBoth)) {
      KeyExtractor extractor(json_spec({"k"}, mode.validate, mode.tree_line_limit));
      const Outcome outcome = run(extractor, line, Padding::kNextLine);
      INFO("line: ", printable(line));
      INFO("mode: ", mode, ", got ", describe(outcome));
      CHECK_FALSE(outcome.ok);
      CHECK(outcome.reason == BadReason::kInvalidJson);
      CHECK(outcome.detail == expected);
    }
  }
}

TEST_CASE("a path that leads nowhere is a missing key naming the path") {
  const std::string_view line = R"({"tags":["red","green"],"n":1,"s":"str","o":{"a":1}})";
  for (const std::string_view key :
       {"tags.2", "tags.x", "tags.01", "tags.-1", "n.0", "s.0", "o.b", "o.a.b", "missing", "/o/b",
        "/tags/2", "/tags/-", "N", "o.A"}) {
    CAPTURE(key);
    const std::string detail = check_json_bad({key}, line, BadReason::kMissingKey);
    CHECK(detail == key);
  }
  CHECK(check_json_bad({"user_id"}, "{}", BadReason::kMissingKey) == "user_id");
}

TEST_CASE("a JSON Pointer key names the same value as its dotted spelling") {
  check_json_key({"/account/id"}, R"({"account":{"id":"acc-1"}})", "acc-1");
  check_json_key({"/tags/1"}, R"({"tags":["red","green"]})", "green");
  check_json_key({"/a~1b"}, R"({"a":{"b":1},"a/b":"slash"})", "slash");
  check_json_key({"/a~0b"}, R"({"a~b":"tilde"})", "tilde");
  check_json_key({"/"}, R"({"x":1,"":"empty name"})", "empty name");
  check_json_key({"/a.b"}, R"({"a":{"b":1},"a.b":"dotted"})", "dotted");
}

TEST_CASE("an escaped dot in a dotted path matches a member name with a dot") {
  check_json_key({"a\\.b"}, R"({"a":{"b":"nested"},"a.b":"dotted"})", "dotted");
  check_json_key({"a.b"}, R"({"a.b":"dotted","a":{"b":"nested"}})", "nested");
}

TEST_CASE("member names are compared after unescaping") {
  check_json_key({"user_id"}, R"({"user\u005fid":"x"})", "x");
  check_json_key({"user_id"}, R"({"\u0075ser_id":"x"})", "x");
  check_json_key({"a\"b"}, R"({"a\"b":1})", "1");
  check_json_key({"a/b"}, R"({"a\/b":"s"})", "s");
  check_json_key({"caf\xc3\xa9"}, R"({"caf\u00e9":"e"})", "e");
  check_json_key({"\xf0\x9f\x98\x80"}, R"({"\ud83d\ude00":"smile"})", "smile");
  check_json_key({"account.id"}, R"({"acc\u006funt":{"i\u0064":"x"}})", "x");
  // And an escaped name that unescapes to something else does not match.
  check_json_bad({"user_id"}, R"({"user\\u005fid":"x"})", BadReason::kMissingKey);
}

// ---------------------------------------------------------------------------------------------
// Duplicates: the first occurrence is the key
// ---------------------------------------------------------------------------------------------

TEST_CASE("of duplicate members the first one is the key") {
  check_json_key({"k"}, R"({"k":"first","k":"second"})", "first");
  check_json_key({"k"}, R"({"k":1,"k":2})", "1");
  check_json_key({"k"}, R"({"k":"first","k":2})", "first");
  check_json_key({"k"}, R"({"k":1,"k":"second"})", "1");
  check_json_key({"k"}, R"({"k":[1],"k":[2]})", "[1]");
  check_json_key({"k"}, R"({"k":"first","\u006b":"second"})", "first");
  check_json_key({"k"}, R"({"\u006b":"first","k":"second"})", "first");
}

TEST_CASE("of duplicate nested members the first one is the key") {
  check_json_key({"a.k"}, R"({"a":{"k":"first","k":"second"}})", "first");
  check_json_key({"a.k"}, R"({"a":{"k":1,"k":2}})", "1");
  check_json_key({"a.b"}, R"({"a":{"b":"first"},"a":{"b":"second"}})", "first");
  check_json_key({"a.b"}, R"({"a":{"b":1},"a":{"b":2}})", "1");
  check_json_key({"t.0"}, R"({"t":["first"],"t":["second"]})", "first");
  // The first `a` is the member; what a later duplicate holds does not count.
  check_json_bad({"a.b"}, R"({"a":{"x":1},"a":{"b":"second"}})", BadReason::kMissingKey);
  check_json_bad({"a.b"}, R"({"a":1,"a":{"b":"second"}})", BadReason::kMissingKey);
}

TEST_CASE("each part of a composite key takes the first occurrence") {
  check_json_key({"a", "b"}, R"({"a":"1","b":"2","a":"3","b":"4"})", "1\x1f" "2");
  check_json_key({"a", "b"}, R"({"b":2,"a":1,"b":4,"a":3})", "1\x1f" "2");
  check_json_key({"o.a", "o.b"}, R"({"o":{"a":"1","a":"x","b":2,"b":"y"}})", "1\x1f" "2");
}

// ---------------------------------------------------------------------------------------------
// Composite keys
// ---------------------------------------------------------------------------------------------

TEST_CASE("a composite key joins its parts with 0x1F in -k order") {
  check_json_key({"a", "b"}, R"({"a":"x","b":"y"})", "x\x1fy");
  check_json_key({"a", "b"}, R"({"b":"y","a":"x"})", "x\x1fy");
  check_json_key({"b", "a"}, R"({"a":"x","b":"y"})", "y\x1fx");
  check_json_key({"a", "b", "c.d"}, R"({"c":{"d":[1]},"a":"x","b":2})", "x\x1f" "2\x1f[1]");
  check_json_key({"a", "a"}, R"({"a":"x"})", "x\x1fx");
  check_json_key({"a", "b"}, R"({"a":"","b":""})", "\x1f");
  check_json_key({"o", "o.b"}, R"({"o":{"b":"in"}})", "{\"b\":\"in\"}\x1fin");
  check_json_key({"o.b", "o"}, R"({"o":{"b":1}})", "1\x1f{\"b\":1}");
  check_json_key({"t.0", "/t/1", "t"}, R"({"t":["a","b"]})", "a\x1f" "b\x1f[\"a\",\"b\"]");
}

TEST_CASE("a composite key with a missing part is a missing key naming that part") {
  CHECK(check_json_bad({"a", "b"}, R"({"a":"x"})", BadReason::kMissingKey) == "b");
  CHECK(check_json_bad({"a", "b"}, R"({"a":1})", BadReason::kMissingKey) == "b");
  CHECK(check_json_bad({"a", "b"}, R"({"b":"y"})", BadReason::kMissingKey) == "a");
  CHECK(check_json_bad({"a", "o.x"}, R"({"a":"x","o":{}})", BadReason::kMissingKey) == "o.x");
}

// ---------------------------------------------------------------------------------------------
// Long lines
// ---------------------------------------------------------------------------------------------

TEST_CASE("a key after long values is found") {
  const std::string long_string(100 * 1024, 'x');
  check_json_key({"k"}, "{\"pad\":\"" + long_string + "\",\"k\":\"after\"}", "after");

  std::string escaped_string;
  for (int i = 0; i < 20000; ++i) escaped_string += "\\n\\u00e9";
  check_json_key({"k"}, "{\"pad\":\"" + escaped_string + "\",\"k\":\"after\"}", "after");

  std::string long_array = "[";
  for (int i = 0; i < 20000; ++i) long_array += std::to_string(i) + ",";
  long_array += "{}]";
  check_json_key({"k"}, "{\"pad\":" + long_array + ",\"k\":42}", "42");
  check_json_key({"k"}, "{\"k\":" + long_array + "}", long_array);

  std::string many_members = "{";
  for (int i = 0; i < 5000; ++i) many_members += "\"m" + std::to_string(i) + "\":" + "1,";
  check_json_key({"k"}, many_members + "\"k\":\"last\"}", "last");

  check_json_key({"k"}, "{\"k\":\"" + long_string + "\"}", long_string);
}

TEST_CASE("a string's end, escapes and control characters are found at any offset") {
  // The grammar checker scans plain string content a block at a time: put each byte that
  // ends a plain run before, on and after every block boundary, in names and in values.
  for (size_t before = 0; before < 40; ++before) {
    const std::string pad(before, 'a');
    INFO("bytes before: ", before);
    check_json_key({"k"}, "{\"k\":\"" + pad + "\"}", pad);
    check_json_key({"k"}, "{\"k\":\"" + pad + "\\\"q\"}", pad + "\"q");
    check_json_key({"k"}, "{\"k\":\"" + pad + "\\u00e9\"}", pad + "\xc3\xa9");
    check_json_key({"k"}, "{\"k\":\"" + pad + "\xc3\xa9 ~\x7f\"}", pad + "\xc3\xa9 ~\x7f");
    check_json_key({"k" + pad}, "{\"k" + pad + "\":1,\"k\":2}", "1");
    check_json_key({"k" + pad}, "{\"\\u006b" + pad + "\":1,\"k" + pad + "\":2}", "1");
    check_json_key({"k"}, "{\"" + pad + "\":1,\"k\":\"" + pad + "\"}", pad);
    check_json_bad({"k"}, "{\"k\":\"" + pad + "\x1f\"}", BadReason::kInvalidJson);
    check_json_bad({"k"}, "{\"k\":\"" + pad + "\x01" + pad + "\"}", BadReason::kInvalidJson);
    check_json_bad({"k"}, "{\"k\":\"" + pad + "\\x\"}", BadReason::kInvalidJson);
    check_json_bad({"k"}, "{\"k\":\"" + pad, BadReason::kInvalidJson);
    check_json_bad({"k"}, "{\"k\":\"" + pad + "\\", BadReason::kInvalidJson);
  }
}

// ---------------------------------------------------------------------------------------------
// Bad lines
// ---------------------------------------------------------------------------------------------

TEST_CASE("an empty or whitespace-only line is an empty line") {
  for (const std::string_view line : {"", " ", "\t", "\r", "   ", " \t \r", "\t\t\r"}) {
    CAPTURE(printable(line));
    check_json_bad({"k"}, line, BadReason::kEmptyLine);
  }
}

TEST_CASE("well-formed JSON that is not an object is not an object") {
  for (const std::string_view line : {"[1,2]", "[]", "\"str\"", "42", "-1.5e3", "true", "false",
                                      "null", " [ {\"k\":1} ] ", "\"k\"\r", "[12345678901234567890123]",
                                      "[1e400]"}) {
    CAPTURE(printable(line));
    check_json_bad({"k"}, line, BadReason::kNotObject);
  }
}

TEST_CASE("a line that is not well-formed JSON is invalid JSON when validating") {
  // Each bad fragment is tried alone, after the key (so finding the key first does not end the
  // check) and after a number too large for simdjson's tree (which takes another code path).
  const std::string_view fragments[] = {
      R"("a":1} x)",        // trailing garbage after the object
      R"("a":1}{"b":2})",   // two objects on one line
      R"("a":1}])",         // a stray closing bracket
      R"("a":1}})",         // a stray closing brace
      R"("a":1 "b":2})",    // missing comma
      R"("a":1,})",         // trailing comma
      R"(,"a":1})",         // leading comma
      R"("a":1,,"b":2})",   // double comma
      R"("a" 1})",          // missing colon
      R"("a"::1})",         // double colon
      R"("a":})",           // missing value
      R"("a"})",            // missing colon and value
      R"(a:1})",            // unquoted name
      R"('a':1})",          // single quotes
      R"(1:1})",            // number as name
      R"("a":"x})",         // unclosed string
      R"("a":1)",           // unclosed object
      R"("a":[1,2})",       // unclosed array
      R"("a":[1,2,]})",     // trailing comma in an array
      R"("a":[1 2]})",      // missing comma in an array
      R"("a":[,1]})",       // leading comma in an array
      R"("a":tru})",        // truncated literal
      R"("a":truex})",      // extended literal
      R"("a":nul})",        // truncated null
      R"("a":True})",       // capitalised literal
      R"("a":01})",         // leading zero
      R"("a":-01})",        // leading zero after minus
      R"("a":1.})",         // no fraction digits
      R"("a":.5})",         // no integer digits
      R"("a":-})",          // lone minus
      R"("a":+1})",         // plus sign
      R"("a":1e})",         // no exponent digits
      R"("a":1e+})",        // no exponent digits after sign
      R"("a":0x10})",       // hex
      R"("a":NaN})",        // NaN
      R"("a":Infinity})",   // Infinity
      R"("a":-Infinity})",  // -Infinity
      R"("a":1-2})",        // junk in a number
      R"("a":"\x"})",       // invalid escape
      R"("a":"\u12"})",     // short \u escape
      R"("a":"\u12g4"})",   // non-hex \u escape
      R"("a":"\ud800"})",   // lone high surrogate
      R"("a":"\udc00"})",   // lone low surrogate
      R"("a":"\ud800x"})",  // high surrogate followed by a character
      R"("a":"\ud800\n"})",  // high surrogate followed by another escape
      R"("\ud800":1})",     // lone surrogate in a member name
      R"("\x":1})",         // invalid escape in a member name
      "\"a\":\"\x01\"}",    // unescaped control character
      "\"a\":\"x\ty\"}",    // unescaped tab
      "\"a\x1f\":1}",       // unescaped control character in a member name
      "\"a\":\"\xff\"}",    // invalid UTF-8
      "\"a\":\"\xc3\"}",    // truncated UTF-8
      "\"a\":\"\xc0\xaf\"}",  // overlong UTF-8
      "\"a\":\"\xed\xa0\x80\"}",  // UTF-8-encoded surrogate
      "\"a\":\"\xf4\x90\x80\x80\"}",  // beyond U+10FFFF
      "\"a\":1}\xc3\xa9",   // UTF-8 after the object
      "\"a\":1} \x0b",      // vertical tab is not JSON whitespace
      "\"a\":1}\x0c",       // nor is form feed
  };
  const std::string prefixes[] = {"{", R"({"k":"v",)", R"({"big":123456789012345678901234567,)",
                                  R"({"k":"v","big":-123456789012345678901234567,)"};
  for (const auto& prefix : prefixes) {
    for (const auto fragment : fragments) {
      const std::string line = prefix + std::string(fragment);
      const std::string detail =
          check_json_bad({"k"}, line, BadReason::kInvalidJson, Modes::kValidateOnly);
      INFO("line: ", printable(line));
      CHECK_FALSE(detail.empty());
    }
  }
}

TEST_CASE("a line that is invalid JSON before its value is known is invalid JSON") {
  const std::string_view lines[] = {"{", "}", "{\"k\"", "x", "[1,2", "\"str", "tru", "01", "NaN",
                                      "{\"k\":\"v\"", "{\"k\":\"v", "[1,2] x", "\"s\" \"t\"", "1 2",
                                      "\xef\xbb\xbf{\"k\":1}", std::string_view("{\"k\":1}\0", 8),
                                      std::string_view("{\"k\":\"v\0\"}", 10)};
  for (const std::string_view line : lines) {
    CAPTURE(printable(line));
    check_json_bad({"k"}, line, BadReason::kInvalidJson, Modes::kValidateOnly);
  }
}

TEST_CASE("without validation an unterminated string is still a bad line, not a crash") {
  KeyExtractor extractor(json_spec({"k"}, false));
  for (const std::string_view line : {"{\"k\":\"v", "{\"k", "{\"", "\"", "{\"a\":\"\\\"}"}) {
    CAPTURE(printable(line));
    const Outcome outcome = run(extractor, line);
    CHECK_FALSE(outcome.ok);
  }
}

TEST_CASE("a bare number too big for simdjson's tree is not an object, not invalid JSON") {
  for (const std::string_view line : {"12345678901234567890123", "-12345678901234567890123",
                                      "1e400", " 1e400 ", "100000000000000000000"}) {
    CAPTURE(line);
    check_json_bad({"k"}, line, BadReason::kNotObject);
  }
}

TEST_CASE("a line holding a number too big for simdjson's tree is still checked for "
          "mismatched brackets") {
  // Such a line is checked by the strict grammar checker instead of the DOM parser.
  const std::string_view lines[] = {
      R"({"n":1e400,"o":"x":1},"k":"v"})",
      R"({"n":100000000000000000000,"o":"x":1},"k":"v"})",
      R"({"n":100000000000000000000,"a":["x":1]],"k":"v"})",
      R"({"n":1e400,"k":"v","o":{"x":{"y":"z":1}}}})",
      R"([100000000000000000000,"x":1}])",
  };
  for (const auto line : lines) {
    check_json_bad({"k"}, line, BadReason::kInvalidJson, Modes::kValidateOnly);
    // The same line with a small number instead is refused, as it should be.
    for (const std::string_view big : {"100000000000000000000", "1e400"}) {
      const size_t at = line.find(big);
      if (at == std::string_view::npos) continue;
      std::string small(line.substr(0, at));
      small.append("1");
      small.append(line.substr(at + big.size()));
      check_json_bad({"k"}, small, BadReason::kInvalidJson, Modes::kValidateOnly);
    }
  }
}

TEST_CASE("bad reasons have stable snake_case names") {
  CHECK(bad_reason_name(BadReason::kEmptyLine) == "empty_line");
  CHECK(bad_reason_name(BadReason::kInvalidJson) == "invalid_json");
  CHECK(bad_reason_name(BadReason::kNotObject) == "not_object");
  CHECK(bad_reason_name(BadReason::kMissingKey) == "missing_key");
}

TEST_CASE("one extractor gives the right answer line after line") {
  for (const bool validate : {true, false}) {
    CAPTURE(validate);
    KeyExtractor extractor(json_spec({"k", "n"}, validate));
    struct Step {
      std::string_view line;
      std::optional<std::string_view> key;
    };
    const Step steps[] = {
        {R"({"k":"a","n":1})", "a\x1f" "1"},
        {R"({"k":"b"})", std::nullopt},
        {R"({"k":"c","n":"d"})", "c\x1f" "d"},
        {"", std::nullopt},
        {R"({"n":[1],"k":{"x":2}})", "{\"x\":2}\x1f[1]"},
        {R"([1])", std::nullopt},
        {R"({"k":"e\u00e9","n":12345678901234567890123})", "e\xc3\xa9\x1f" "12345678901234567890123"},
        {R"({"k":"f","n":null})", "f\x1fnull"},
    };
    for (const auto& step : steps) {
      const Outcome outcome = run(extractor, step.line, Padding::kNextLine);
      INFO("line: ", printable(step.line), ", got ", describe(outcome));
      CHECK(outcome.ok == step.key.has_value());
      if (step.key) CHECK(outcome.key == *step.key);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// CRLF
// ---------------------------------------------------------------------------------------------

TEST_CASE("a trailing \\r of CRLF input is whitespace to the JSON parser") {
  check_json_key({"k"}, "{\"k\":\"v\"}\r", "v");
  check_json_key({"k"}, "{\"k\":42}\r", "42");
  check_json_key({"k"}, "{\"k\":true}\r", "true");
  check_json_key({"k"}, "{\"k\":{\"a\":1}}\r", "{\"a\":1}");
  check_json_key({"k"}, "{\"z\":0,\"k\":[1]\r}\r", "[1]");
  check_json_key({"k"}, "{\"k\":\"v\"} \t\r", "v");
  check_json_bad({"k"}, "{\"a\":1}\r", BadReason::kMissingKey);
}

TEST_CASE("a trailing \\r is not part of a delimited or line key") {
  KeyExtractor delimited(delimited_spec({2}, ','));
  CHECK(run(delimited, "a,b\r").key == "b");
  CHECK(run(delimited, "a,\r").key == "");
  CHECK(run(delimited, "a,b\r\r").key == "b\r");  // only the one before '\n' is CRLF's
  CHECK(run(delimited, "a,b\rc,d").key == "b\rc");
  KeyExtractor first(delimited_spec({1}, ','));
  CHECK(run(first, "a\r").key == "a");
  CHECK(run(first, "\r").key == "");

  KeyExtractor line(line_spec());
  CHECK(run(line, "abc\r").key == "abc");
  CHECK(run(line, "a\rb").key == "a\rb");
  CHECK(run(line, "\r").key == "");
  CHECK(run(line, "\r\r").key == "\r");
}

TEST_CASE("a byte order mark is not part of the key of an input's first delimited or plain line") {
  const std::string bom = "\xEF\xBB\xBF";
  const std::string padding(kLinePadding, '\0');
  // The key, copied out of the text it points into ("(bad)" for a bad line).
  auto extract = [&](KeyExtractor& extractor, const std::string& line, bool starts_input) {
    const std::string text = line + padding;
    const Extraction got = extractor.extract(std::string_view(text.data(), line.size()),
                                             text.size(), starts_input);
    return got.ok ? std::string(got.key) : std::string("(bad)");
  };
  KeyExtractor delimited(delimited_spec({1}, ','));
  CHECK(extract(delimited, bom + "user1,a", true) == "user1");
  CHECK(extract(delimited, bom + "user1,a", false) == bom + "user1");  // not at the start
  CHECK(extract(delimited, bom, true).empty());
  KeyExtractor line(line_spec());
  CHECK(extract(line, bom + "user1\r", true) == "user1");
  CHECK(extract(line, bom + bom + "x", true) == bom + "x");  // one mark only
  CHECK(extract(line, bom + "user1", false) == bom + "user1");
  KeyExtractor json(json_spec({"k"}, true));
  CHECK(extract(json, bom + R"({"k":"a"})", true) == "(bad)");  // a bad line that says so
}

// ---------------------------------------------------------------------------------------------
// --format delimited and --format line
// ---------------------------------------------------------------------------------------------

TEST_CASE("a delimited key is the 1-based field between delimiters") {
  KeyExtractor extractor(delimited_spec({3}, ','));
  CHECK(run(extractor, "a,b,c,d").key == "c");
  CHECK(run(extractor, "a,b,c").key == "c");
  CHECK(run(extractor, "1,2,three").key == "three");
  CHECK(run(extractor, "a,b,").key == "");
  CHECK(run(extractor, ",,").key == "");
  CHECK(run(extractor, "a,b,c c ,d").key == "c c ");
  // No quoting rules: a quoted delimiter still splits.
  CHECK(run(extractor, "\"a,b\",c").key == "c");
  CHECK(run(extractor, "\"a,b\",c,d").key == "c");
  KeyExtractor first(delimited_spec({1}, ','));
  CHECK(run(first, "a,b").key == "a");
  CHECK(run(first, "abc").key == "abc");
  CHECK(run(first, ",b").key == "");
  CHECK(run(first, "").key == "");
  CHECK(run(first, "\"a,b\",c").key == "\"a");
}

TEST_CASE("the default delimiter is a tab, and any byte can be one") {
  KeySpec spec;
  spec.format = InputFormat::kDelimited;
  spec.fields = {2};
  KeyExtractor tab(spec);
  CHECK(run(tab, "a\tb\tc").key == "b");
  CHECK(run(tab, "a,b\tc").key == "c");
  KeyExtractor pipe(delimited_spec({2}, '|'));
  CHECK(run(pipe, "a|b|c").key == "b");
  KeyExtractor unit(delimited_spec({2}, '\x1f'));
  CHECK(run(unit, "a\x1f" "b").key == "b");
  KeyExtractor high(delimited_spec({2}, '\xe9'));
  CHECK(run(high, "a\xe9" "b").key == "b");
}

TEST_CASE("a delimited line with too few fields is a missing key naming the field") {
  KeyExtractor extractor(delimited_spec({3}, ','));
  for (const std::string_view line : {"a,b", "a", "", "ab", ","}) {
    CAPTURE(line);
    const Outcome outcome = run(extractor, line);
    CHECK_FALSE(outcome.ok);
    CHECK(outcome.reason == BadReason::kMissingKey);
    CHECK(outcome.detail == "field 3");
  }
  KeyExtractor second(delimited_spec({2}, ','));
  CHECK(run(second, "a").reason == BadReason::kMissingKey);
  CHECK(run(second, "a,").ok);
  CHECK(run(second, "a,").key == "");
}

TEST_CASE("a composite delimited key joins its fields with 0x1F in -k order") {
  KeyExtractor extractor(delimited_spec({3, 1}, ','));
  CHECK(run(extractor, "a,b,c").key == "c\x1f" "a");
  CHECK(run(extractor, ",b,").key == "\x1f");
  KeyExtractor same(delimited_spec({2, 2}, ','));
  CHECK(run(same, "a,b,c").key == "b\x1f" "b");
  KeyExtractor three(delimited_spec({1, 2, 4}, ';'));
  CHECK(run(three, "w;x;y;z;more").key == "w\x1fx\x1fz");
  const Outcome missing = run(three, "w;x;y");
  CHECK_FALSE(missing.ok);
  CHECK(missing.reason == BadReason::kMissingKey);
  CHECK(missing.detail == "field 4");
  KeyExtractor first_missing(delimited_spec({5, 1}, ','));
  CHECK(run(first_missing, "a,b").detail == "field 5");
}

TEST_CASE("a line key is the whole line as it stands") {
  KeyExtractor extractor(line_spec());
  CHECK(run(extractor, "user_1").key == "user_1");
  CHECK(run(extractor, "").key == "");
  CHECK(run(extractor, " spaced  ").key == " spaced  ");
  CHECK(run(extractor, "{\"k\": \"not parsed\"}").key == "{\"k\": \"not parsed\"}");
  CHECK(run(extractor, "not json {").key == "not json {");
  CHECK(run(extractor, "\xff\xfe").key == "\xff\xfe");
  CHECK(run(extractor, std::string_view("a\0b", 3)).key == std::string_view("a\0b", 3));
  CHECK(run(extractor, "x").ok);
}

// ---------------------------------------------------------------------------------------------
// Differential test against an independent strict JSON parser
// ---------------------------------------------------------------------------------------------

namespace {

// A strict RFC 8259 parser kept deliberately simple: it builds a tree of the values, keeping
// every member (duplicates included, in order), each value's raw text and each string unescaped.
// Lone surrogate escapes and any invalid UTF-8 are refused, as simdjson refuses them.
class ReferenceJson {
 public:
  enum class Kind { kObject, kArray, kString, kNumber, kLiteral };
  struct Value {
    Kind kind = Kind::kLiteral;
    std::string_view raw;   // the value's text exactly as written
    std::string unescaped;  // for strings
    std::vector<std::pair<std::string, size_t>> members;  // for objects: name, value index
    std::vector<size_t> elements;                         // for arrays: value indices
  };

  /// True when `text` is exactly one JSON value with optional whitespace around it.
  bool parse(std::string_view text) {
    text_ = text;
    at_ = 0;
    values_.clear();
    skip_whitespace();
    size_t root = 0;
    if (!parse_value(root, 0)) return false;
    skip_whitespace();
    return at_ == text_.size();
  }

  const Value& root() const { return values_[0]; }

  /// The key bytes of `path` (first occurrence of duplicates), or nullopt when it is missing.
  std::optional<std::string> look_up(const KeyPath& path) const {
    const Value* at = &values_[0];
    for (const PathComponent& component : path.components) {
      const Value* next = nullptr;
      if (at->kind == Kind::kObject) {
        for (const auto& [name, index] : at->members) {
          if (name == component.name) {
            next = &values_[index];
            break;
          }
        }
      } else if (at->kind == Kind::kArray && component.array_index &&
                 *component.array_index < at->elements.size()) {
        next = &values_[at->elements[*component.array_index]];
      }
      if (next == nullptr) return std::nullopt;
      at = next;
    }
    return at->kind == Kind::kString ? at->unescaped : std::string(at->raw);
  }

 private:
  static constexpr int kMaxDepth = 500;

  bool at_end() const { return at_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[at_]; }

  void skip_whitespace() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
      ++at_;
    }
  }

  bool consume(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }

  // Parses one value at the current position (no leading whitespace) into a new slot.
  bool parse_value(size_t& index, int depth) {
    if (depth > kMaxDepth) return false;
    index = values_.size();
    values_.emplace_back();
    const size_t start = at_;
    Value value;
    bool good = false;
    switch (peek()) {
      case '{': value.kind = Kind::kObject; good = parse_object(value, depth); break;
      case '[': value.kind = Kind::kArray; good = parse_array(value, depth); break;
      case '"': value.kind = Kind::kString; good = parse_string(value.unescaped); break;
      case 't': good = consume("true"); break;
      case 'f': good = consume("false"); break;
      case 'n': good = consume("null"); break;
      default: value.kind = Kind::kNumber; good = parse_number(); break;
    }
    if (!good) return false;
    value.raw = text_.substr(start, at_ - start);
    values_[index] = std::move(value);
    return true;
  }

  bool parse_object(Value& value, int depth) {
    ++at_;  // '{'
    skip_whitespace();
    if (peek() == '}') {
      ++at_;
      return true;
    }
    for (;;) {
      skip_whitespace();
      if (peek() != '"') return false;
      std::string name;
      if (!parse_string(name)) return false;
      skip_whitespace();
      if (peek() != ':') return false;
      ++at_;
      skip_whitespace();
      size_t child = 0;
      if (!parse_value(child, depth + 1)) return false;
      value.members.emplace_back(std::move(name), child);
      skip_whitespace();
      if (peek() == ',') {
        ++at_;
        continue;
      }
      if (peek() == '}') {
        ++at_;
        return true;
      }
      return false;
    }
  }

  bool parse_array(Value& value, int depth) {
    ++at_;  // '['
    skip_whitespace();
    if (peek() == ']') {
      ++at_;
      return true;
    }
    for (;;) {
      skip_whitespace();
      size_t child = 0;
      if (!parse_value(child, depth + 1)) return false;
      value.elements.push_back(child);
      skip_whitespace();
      if (peek() == ',') {
        ++at_;
        continue;
      }
      if (peek() == ']') {
        ++at_;
        return true;
      }
      return false;
    }
  }

  bool parse_digits() {
    const size_t start = at_;
    while (!at_end() && peek() >= '0' && peek() <= '9') ++at_;
    return at_ > start;
  }

  bool parse_number() {
    if (peek() == '-') ++at_;
    if (peek() == '0') {
      ++at_;
    } else if (peek() >= '1' && peek() <= '9') {
      parse_digits();
    } else {
      return false;
    }
    if (peek() == '.') {
      ++at_;
      if (!parse_digits()) return false;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++at_;
      if (peek() == '+' || peek() == '-') ++at_;
      if (!parse_digits()) return false;
    }
    return true;
  }

  bool parse_hex4(uint32_t& value) {
    if (at_ + 4 > text_.size()) return false;
    value = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[at_++];
      value <<= 4;
      if (c >= '0' && c <= '9') value |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') value |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') value |= static_cast<uint32_t>(c - 'A' + 10);
      else return false;
    }
    return true;
  }

  static void append_utf8(std::string& out, uint32_t code_point) {
    if (code_point < 0x80) {
      out.push_back(static_cast<char>(code_point));
    } else if (code_point < 0x800) {
      out.push_back(static_cast<char>(0xc0 | (code_point >> 6)));
      out.push_back(static_cast<char>(0x80 | (code_point & 0x3f)));
    } else if (code_point < 0x10000) {
      out.push_back(static_cast<char>(0xe0 | (code_point >> 12)));
      out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (code_point & 0x3f)));
    } else {
      out.push_back(static_cast<char>(0xf0 | (code_point >> 18)));
      out.push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (code_point & 0x3f)));
    }
  }

  // One UTF-8 character of a string body, strictly: shortest form, no surrogates, <= U+10FFFF.
  bool copy_utf8_character(std::string& out) {
    const auto lead = static_cast<unsigned char>(text_[at_]);
    size_t length = 0;
    uint32_t code_point = 0;
    if (lead < 0x80) {
      length = 1;
      code_point = lead;
    } else if (lead >= 0xc2 && lead <= 0xdf) {
      length = 2;
      code_point = lead & 0x1f;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      code_point = lead & 0x0f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      code_point = lead & 0x07;
    } else {
      return false;
    }
    if (at_ + length > text_.size()) return false;
    for (size_t i = 1; i < length; ++i) {
      const auto next = static_cast<unsigned char>(text_[at_ + i]);
      if ((next & 0xc0) != 0x80) return false;
      code_point = (code_point << 6) | (next & 0x3f);
    }
    const uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code_point < smallest[length]) return false;
    if (code_point >= 0xd800 && code_point <= 0xdfff) return false;
    if (code_point > 0x10ffff) return false;
    out.append(text_.substr(at_, length));
    at_ += length;
    return true;
  }

  bool parse_string(std::string& out) {
    ++at_;  // '"'
    out.clear();
    for (;;) {
      if (at_end()) return false;
      const char c = peek();
      if (c == '"') {
        ++at_;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        if (!copy_utf8_character(out)) return false;
        continue;
      }
      ++at_;
      if (at_end()) return false;
      const char escape = text_[at_++];
      switch (escape) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          uint32_t unit = 0;
          if (!parse_hex4(unit)) return false;
          if (unit >= 0xdc00 && unit <= 0xdfff) return false;  // a lone low surrogate
          if (unit >= 0xd800 && unit <= 0xdbff) {
            uint32_t low = 0;
            if (!consume("\\u") || !parse_hex4(low)) return false;
            if (low < 0xdc00 || low > 0xdfff) return false;
            unit = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
          }
          append_utf8(out, unit);
          break;
        }
        default: return false;
      }
    }
  }

  std::string_view text_;
  size_t at_ = 0;
  std::vector<Value> values_;
};

// The outcome the reference expects for `line` under the -k `paths`.
Outcome reference_outcome(ReferenceJson& reference, std::string_view line,
                          const std::vector<KeyPath>& paths) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
    return {false, BadReason::kEmptyLine, {}, {}};
  }
  if (!reference.parse(line)) return {false, BadReason::kInvalidJson, {}, {}};
  if (reference.root().kind != ReferenceJson::Kind::kObject) {
    return {false, BadReason::kNotObject, {}, {}};
  }
  std::string key;
  for (size_t i = 0; i < paths.size(); ++i) {
    const auto part = reference.look_up(paths[i]);
    if (!part) return {false, BadReason::kMissingKey, paths[i].spelling, {}};
    if (i > 0) key.push_back('\x1f');
    key += *part;
  }
  return {true, BadReason::kInvalidJson, {}, key};
}

// Valid objects the mutations start from: duplicates, nesting, escapes, big numbers, UTF-8.
constexpr std::string_view kSeeds[] = {
    R"({"k":"v","a":1})",
    R"({"a":[1,2,{"b":null}],"k":"x\u00e9y","n":-1.5e3,"o":{"x":"in"}})",
    R"({"k":{"x":[true,false]},"s":"t\\\"q","a":[0,"one"]})",
    R"({ "o" : { "x" : "in" } , "k" : 12 , "a" : [ "p" , 0 ] })",
    R"({"big":123456789012345678901234567890,"k":"after big","a":[1,2e400]})",
    R"({"k":"first","k":"second","o":{"x":1,"x":2},"o":{"x":3}})",
    R"({"e":"\ud83d\ude00","k":"\u00e9\n\t\/","a":[[],{}],"o":{}})",
    "{\"k\":\"\xc3\xa9\xf0\x9f\x98\x80\xe5\x90\x8d\",\"u\":\"\\u0041\",\"a\":[\"\",-0]}",
    R"({"k":-0.0e+1,"o":{"x":"y"},"a":["z",1.25]})",
    R"({})",
    "{\"k\":\"v\"}\r",
    R"({"\u006b":"escaped name","o":{"\u0078":[1]},"a":{"1":"member"}})",
    R"({"k":null,"a":[{"k":1},[2,[3]]],"o":{"x":{"y":{"z":"deep"}}}})",
    R"({"k":"12345678901234567890123","o":{"x":12345678901234567890123},"a":[7,-12345678901234567890123]})",
    R"([{"k":"not an object"}])",
    R"("k")",
};

// Pieces the mutations insert: single characters of the JSON grammar, and a few tokens that a
// single character rarely builds (escapes, surrogates, literals, UTF-8 good and bad).
constexpr std::string_view kPieces[] = {
    "{", "}", "[", "]", "\"", ":", ",", " ", "\t", "\r", "\\", ".", "-", "+", "e", "E",
    "0", "1", "2", "5", "9", "a", "b", "f", "k", "l", "n", "o", "r", "s", "t", "u", "x",
    "\\u", "\\ud800", "\\udc00", "\\ud83d\\ude00", "\\u0041", "\\n", "\\\"", "true", "null",
    "1e5", "12345678901234567890123", "\"k\":", ",\"k\":\"dup\"", "\"k\":1,", "\xc3\xa9",
    "\xc3", "\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf", "\x01", "\x7f",
    std::string_view("\0", 1), "\x0b",
};

std::string mutate(std::string line, std::mt19937_64& random) {
  auto below = [&random](size_t n) {
    return static_cast<size_t>(std::uniform_int_distribution<uint64_t>(0, n - 1)(random));
  };
  const size_t edits = 1 + below(3);
  for (size_t edit = 0; edit < edits; ++edit) {
    const size_t position = below(line.size() + 1);
    const std::string_view piece = kPieces[below(std::size(kPieces))];
    switch (below(3)) {
      case 0: line.insert(position, piece); break;
      case 1:
        if (position < line.size()) line.erase(position, 1 + below(2));
        break;
      default:
        if (position < line.size()) line.replace(position, 1, piece);
        break;
    }
  }
  return line;
}

// Whether two outcomes agree: same verdict, same reason, same key; details are not compared
// except for a missing key, which must name the path.
bool same_outcome(const Outcome& actual, const Outcome& expected) {
  if (actual.ok != expected.ok) return false;
  if (actual.ok) return actual.key == expected.key;
  if (actual.reason != expected.reason) return false;
  return expected.reason != BadReason::kMissingKey || actual.detail == expected.detail;
}

}  // namespace

TEST_CASE("the reference parser used by the differential test is itself right") {
  ReferenceJson reference;
  CHECK(reference.parse(R"({"a":[1,2.5e-3,{"b":null}],"c":"\ud83d\ude00"})"));
  CHECK(reference.parse(" 1 "));
  CHECK_FALSE(reference.parse("01"));
  CHECK_FALSE(reference.parse(R"({"a":1,})"));
  CHECK_FALSE(reference.parse(R"("\ud800")"));
  CHECK_FALSE(reference.parse(R"("\ud800\u0041")"));
  CHECK_FALSE(reference.parse("\"\xed\xa0\x80\""));
  CHECK_FALSE(reference.parse("{} x"));
  REQUIRE(reference.parse(R"({"k":"\u00e9","k":2,"o":{"x":[1, 2]}})"));
  const auto paths = key_paths({"k", "o.x", "o.x.1", "o.y"});
  CHECK(reference.look_up(paths[0]) == std::optional<std::string>("\xc3\xa9"));
  CHECK(reference.look_up(paths[1]) == std::optional<std::string>("[1, 2]"));
  CHECK(reference.look_up(paths[2]) == std::optional<std::string>("2"));
  CHECK(reference.look_up(paths[3]) == std::nullopt);
}

namespace {

constexpr int kMutatedLines = 20000;
constexpr std::string_view kBigNumberMember = R"("big":123456789012345678901234567890,)";

// The lines of the differential tests: the seeds, then mutations of them (a fixed seed, so a
// failure names a line that the next run reproduces).
const std::vector<std::string>& mutated_lines() {
  static const std::vector<std::string> lines = [] {
    std::vector<std::string> made;
    std::mt19937_64 random(20240611);
    for (int i = 0; i < kMutatedLines; ++i) {
      const std::string seed(kSeeds[static_cast<size_t>(i) % std::size(kSeeds)]);
      made.push_back(i < static_cast<int>(std::size(kSeeds)) ? seed : mutate(seed, random));
    }
    return made;
  }();
  return lines;
}

// The same lines with a number too big for simdjson's tree put first in the object, so that
// the validating extractor takes its other path (the On Demand walker) for every one of them
// that passes simdjson's first stage (UTF-8, string and control-character checks).
std::vector<std::string> with_big_number_first(const std::vector<std::string>& lines) {
  std::vector<std::string> made;
  for (const auto& line : lines) {
    if (line.empty() || line[0] != '{') continue;
    made.push_back("{" + std::string(kBigNumberMember) + line.substr(1));
  }
  return made;
}

const std::vector<std::vector<std::string_view>> kDifferentialKeys = {{"k"}, {"o.x"}, {"k", "a.1"}};

// Counts what the reference parser finds in `lines` under -k k, so a test can check that the
// mutations produce plenty of valid and invalid lines.
struct LineMix {
  size_t valid_objects = 0;
  size_t keys_found = 0;
  size_t invalid = 0;
};

// Runs `extract` on every line under every key set and compares its outcome with the reference.
// Only lines for which `defined(expected)` holds are compared. Returns the number of
// disagreements; the first few are reported with the line, both outcomes and the keys.
template <typename Extract, typename Defined>
size_t count_disagreements(const std::vector<std::string>& lines, std::string_view what,
                           Extract extract, Defined defined, LineMix* mix = nullptr) {
  ReferenceJson reference;
  size_t disagreements = 0;
  for (size_t set = 0; set < kDifferentialKeys.size(); ++set) {
    const auto paths = key_paths(kDifferentialKeys[set]);
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string& line = lines[i];
      const Outcome expected = reference_outcome(reference, line, paths);
      if (mix != nullptr && set == 0) {
        if (expected.ok || expected.reason == BadReason::kMissingKey) ++mix->valid_objects;
        if (expected.ok) ++mix->keys_found;
        if (!expected.ok && expected.reason == BadReason::kInvalidJson) ++mix->invalid;
      }
      if (!defined(expected)) continue;
      const Padding padding = i % 2 == 0 ? Padding::kZeros : Padding::kNextLine;
      const Outcome actual = extract(set, line, padding);
      if (same_outcome(actual, expected)) continue;
      if (++disagreements <= 10) {
        INFO(std::string(what), ", line ", i, ": ", printable(line));
        INFO("-k ", kDifferentialKeys[set].size() == 1 ? paths[0].spelling : "k -k a.1");
        INFO("reference: ", describe(expected));
        INFO("actual:    ", describe(actual));
        CHECK(same_outcome(actual, expected));
      }
    }
  }
  return disagreements;
}

bool always(const Outcome&) { return true; }

// Without validation only lines that are valid objects have a defined answer.
bool valid_object(const Outcome& expected) {
  return expected.ok || expected.reason == BadReason::kMissingKey;
}

// One extractor per key set of kDifferentialKeys.
std::vector<KeyExtractor> extractors(bool validate, size_t tree_line_limit = kTreeLineLimit) {
  std::vector<KeyExtractor> made;
  for (const auto& keys : kDifferentialKeys) {
    made.emplace_back(json_spec(keys, validate, tree_line_limit));
  }
  return made;
}

}  // namespace

TEST_CASE("validation agrees with an independent strict JSON parser on 20000 mutated lines") {
  auto validating = extractors(true);
  LineMix mix;
  const size_t disagreements = count_disagreements(
      mutated_lines(), "validating extractor",
      [&](size_t set, std::string_view line, Padding padding) {
        return run(validating[set], line, padding);
      },
      always, &mix);
  CHECK(disagreements == 0);
  // The mutations must produce plenty of both kinds, or the test proves little.
  CAPTURE(mix.valid_objects);
  CAPTURE(mix.keys_found);
  CAPTURE(mix.invalid);
  CHECK(mix.valid_objects > kMutatedLines / 20);
  CHECK(mix.keys_found > kMutatedLines / 40);
  CHECK(mix.invalid > kMutatedLines / 4);
}

TEST_CASE("lines past the tree limit (the grammar checker) agree with the strict parser on "
          "20000 mutated lines, --no-validate or not") {
  for (const bool validate : {true, false}) {
    auto checking = extractors(validate, 0);
    LineMix mix;
    const size_t disagreements = count_disagreements(
        mutated_lines(), validate ? "grammar checker" : "grammar checker, --no-validate",
        [&](size_t set, std::string_view line, Padding padding) {
          return run(checking[set], line, padding);
        },
        always, &mix);
    CHECK(disagreements == 0);
    CHECK(mix.keys_found > kMutatedLines / 40);
  }
}

TEST_CASE("without validation every valid object still gives the reference key") {
  auto trusting = extractors(false);
  const size_t disagreements = count_disagreements(
      mutated_lines(), "non-validating extractor",
      [&](size_t set, std::string_view line, Padding padding) {
        return run(trusting[set], line, padding);
      },
      valid_object);
  CHECK(disagreements == 0);
  // Lines that are not valid objects have no defined key, but must not crash or hang.
  for (const auto& line : mutated_lines()) {
    for (auto& extractor : trusting) (void)run(extractor, line);
  }
}

TEST_CASE("validation agrees with the strict parser on lines holding a number too big for "
          "simdjson's tree") {
  // Such lines are validated by the grammar checker instead of the DOM parser.
  const auto lines = with_big_number_first(mutated_lines());
  REQUIRE(lines.size() > kMutatedLines / 2);
  auto validating = extractors(true);
  LineMix mix;
  const size_t disagreements = count_disagreements(
      lines, "validating extractor, big number first",
      [&](size_t set, std::string_view line, Padding padding) {
        return run(validating[set], line, padding);
      },
      always, &mix);
  CHECK(disagreements == 0);
  CAPTURE(mix.valid_objects);
  CAPTURE(mix.invalid);
  CHECK(mix.valid_objects > kMutatedLines / 20);
}

}  // namespace keyshard

namespace keyshard {
namespace {

// Lines that test how a block's documents line up with its lines: blank lines, a line with
// two values, values that run over into the next line, scalars, junk after a value.
constexpr std::string_view kBlockLines[] = {
    "", "   ", "\t\r", "\r", R"({"k":"a"} {"k":"b"})", R"({"k":"a"}{"k":"b"})",
    R"({"k":"open")", "}", R"({"k":"a"} x)", R"(  {"k":"padded"}  )", "{\"k\":\"crlf\"}\r",
    "123", R"("k")", "[1,2]", R"([{"k":"v"}])", "null", R"({"k":"v"}])", R"({"k":"v"}})",
    R"({"k":"unterminated)", R"("})", "\f{\"k\":\"v\"}", R"({"k":"v"} 1)", "{\"k\":\"v\"}\x0b",
};

// Blocks of lines, each as the chunk reader makes them ('\n' after every line but perhaps the
// last, padding after). A third of the blocks hold valid objects and blank lines only, a third
// one odd line more, and a third any mix of valid, odd and mutated lines.
std::vector<std::string> block_lines_for(std::mt19937_64& random,
                                         const std::vector<std::string>& valid) {
  auto below = [&random](size_t n) {
    return static_cast<size_t>(std::uniform_int_distribution<uint64_t>(0, n - 1)(random));
  };
  std::vector<std::string> lines(1 + below(40));
  const size_t kind = below(3);
  for (auto& line : lines) {
    const size_t pick = below(20);
    if (pick < 14 || kind < 2) {
      line = pick == 19 ? "  " : valid[below(valid.size())];
    } else if (pick < 17) {
      line = std::string(kBlockLines[below(std::size(kBlockLines))]);
    } else {
      line = mutated_lines()[below(mutated_lines().size())];
    }
  }
  if (kind == 1) {
    lines[below(lines.size())] = below(2) == 0
                                     ? std::string(kBlockLines[below(std::size(kBlockLines))])
                                     : mutated_lines()[below(mutated_lines().size())];
  }
  return lines;
}

// Extractors over blocks parsed in windows of several sizes, compared with one that reads each
// line alone.
struct BlockComparison {
  KeyExtractor alone;
  std::vector<KeyExtractor> in_blocks;  // windows of kBlockWindow, 256 bytes and one line
  size_t lines_checked = 0;
  size_t disagreements = 0;

  explicit BlockComparison(const KeySpec& spec) : alone(spec) {
    for (const size_t window : {kBlockWindow, size_t{256}, size_t{1}}) {
      KeySpec windowed = spec;
      windowed.block_window = window;
      in_blocks.emplace_back(windowed);
    }
  }

  // Hands `lines` to every in-block extractor as one block ('\n' after each line, but the last
  // unless `final_newline`; `padding` bytes after it) and counts each line whose result in a
  // block differs from its result alone; the first few are reported. `context` names the case.
  void check(const std::vector<std::string>& lines, bool final_newline, char padding,
             const std::string& context) {
    std::string text;
    std::vector<size_t> starts;
    for (size_t i = 0; i < lines.size(); ++i) {
      starts.push_back(text.size());
      text += lines[i];
      if (i + 1 < lines.size() || final_newline) text += '\n';
    }
    const size_t size = text.size();
    text.append(kLinePadding, padding);
    for (KeyExtractor& extractor : in_blocks) extractor.begin_block(text.data(), size);
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string_view line(text.data() + starts[i], lines[i].size());
      const size_t readable = text.size() - starts[i];
      const Outcome expected = run(alone, line);
      ++lines_checked;
      for (size_t e = 0; e < in_blocks.size(); ++e) {
        const Outcome actual = outcome_of(in_blocks[e].extract_in_block(line, readable));
        const bool same = actual.ok == expected.ok && actual.reason == expected.reason &&
                          actual.detail == expected.detail && actual.key == expected.key;
        if (!same && ++disagreements <= 10) {
          INFO(context, ", line ", i, ", window kind ", e, ": ", printable(lines[i]));
          INFO("alone:    ", describe(expected));
          INFO("in block: ", describe(actual));
          CHECK(same);
        }
      }
    }
  }
};

}  // namespace

TEST_CASE("a line outside any block is read on its own") {
  // Against the contract (begin_block first), but no reason to read memory it was not given.
  KeyExtractor extractor(json_spec({"k"}, true));
  const PaddedLine before(R"({"k":"a"})");
  const Outcome first = outcome_of(extractor.extract_in_block(before.line(), before.readable()));
  CHECK(first.ok);
  CHECK(first.key == "a");
  std::string block = "{\"k\":\"b\"}\n";
  const size_t size = block.size();
  block.append(kLinePadding, '\0');
  extractor.begin_block(block.data(), size);
  const Outcome inside =
      outcome_of(extractor.extract_in_block({block.data(), size - 1}, block.size()));
  CHECK(inside.key == "b");
  const PaddedLine after(R"({"k":"c"})");
  const Outcome outside = outcome_of(extractor.extract_in_block(after.line(), after.readable()));
  CHECK(outside.key == "c");
}

TEST_CASE("every line of a block gets the result it gets on its own, with or without validation") {
  // Blocks are parsed in windows of lines: whole (the blocks here are smaller than a window),
  // a few lines at a time, and one line at a time.
  ReferenceJson reference;
  const auto first_key = key_paths({"k"});
  std::vector<std::string> valid;
  for (const auto& line : mutated_lines()) {
    // (A number too big for simdjson's tree sends the rest of its block line by line.)
    const bool big_number = line.find("1234567890123") != std::string::npos ||
                            line.find("e400") != std::string::npos;
    if (!big_number && valid_object(reference_outcome(reference, line, first_key))) {
      valid.push_back(line);
    }
  }
  REQUIRE(valid.size() > 1000);

  std::mt19937_64 random(20261202);
  for (size_t run_of = 0; run_of < 2 * kDifferentialKeys.size(); ++run_of) {
    const size_t set = run_of % kDifferentialKeys.size();
    const bool validate = run_of < kDifferentialKeys.size();
    BlockComparison blocks(json_spec(kDifferentialKeys[set], validate));
    for (int block = 0; block < 3000; ++block) {
      blocks.check(block_lines_for(random, valid), block % 5 != 0, block % 2 == 0 ? '\0' : '}',
                   "block " + std::to_string(block));
    }
    CAPTURE(set);
    CAPTURE(validate);
    CHECK(blocks.disagreements == 0);
    // Validating, most lines must have come from whole-block parses, or the test proves little.
    // With --no-validate, lines come from a window only when the scan of its structural index,
    // stopping at the key, confirms them (a tenth to two fifths of these lines, by key set: the
    // rest are invalid before their key, have no key or end with anything but '}'); every
    // other line is read on its own, so this also checks that its result does not depend on
    // the lines after it.
    const size_t lines_checked = blocks.lines_checked;
    CAPTURE(lines_checked);
    for (const KeyExtractor& extractor : blocks.in_blocks) {
      CAPTURE(extractor.lines_from_blocks());
      CAPTURE(extractor.lines_from_scans());
      if (validate) {
        CHECK(extractor.lines_from_blocks() > lines_checked / 3);
      } else {
        CHECK(extractor.lines_from_scans() > lines_checked / 20);
        CHECK(extractor.lines_from_scans() == extractor.lines_from_blocks());
      }
    }
  }
}

TEST_CASE("the scan of a window's structural index agrees with each line on its own") {
  // The mutated lines as they are and with every backslash taken out, so that many more lines
  // are objects the scan may confirm; the rest are invalid in every other way the mutations
  // make. Each line's result in a block must be its result alone.
  // To them come plain lines in which every key set finds strings, numbers or literals, and
  // their mutations.
  constexpr std::string_view kPlainSeeds[] = {
      R"({"k":12,"a":[true,-1.5e2],"o":{"x":null}})",
      R"({"k" : -0.50 , "o" : { "x" : 1E+400 } , "a" : [ 0 , false ] })",
      R"({"k":"p","a":["q","r"],"o":{"x":"s"}})",
      R"({"o":{"y":[1,2.5e-3,true,null],"x":"in"},"a":{"1":"one"},"k":"v","n":-0})",
      R"({ "a" : [ "0" , "1" ] , "k" : "spaced" , "o" : { "x" : "x" } })",
      R"({"\u006b":"escaped first","k":"plain second","o":{"x":"\ud83d\ude00"},"a":["p","\""]})",
  };
  std::mt19937_64 random(20261204);
  std::vector<std::string> plain(mutated_lines());
  for (int i = 0; i < 3000; ++i) {
    const std::string_view seed = kPlainSeeds[static_cast<size_t>(i) % std::size(kPlainSeeds)];
    plain.push_back(i < 30 ? std::string(seed) : mutate(std::string(seed), random));
  }
  for (size_t i = 0, lines = plain.size(); i < lines; ++i) {
    std::string line = plain[i];
    std::erase(line, '\\');
    plain.push_back(line);
  }
  auto below = [&random](size_t n) {
    return static_cast<size_t>(std::uniform_int_distribution<uint64_t>(0, n - 1)(random));
  };
  for (size_t run_of = 0; run_of < 2 * kDifferentialKeys.size(); ++run_of) {
    const size_t set = run_of % kDifferentialKeys.size();
    const bool validate = run_of < kDifferentialKeys.size();  // then --no-validate: the scan
                                                              // stops at the key
    BlockComparison blocks(json_spec(kDifferentialKeys[set], validate));
    std::vector<std::string> keyed;  // the lines that give a key on their own
    for (const std::string& line : plain) {
      if (run(blocks.alone, line).ok) keyed.push_back(line);
    }
    REQUIRE(keyed.size() > 100);
    for (int block = 0; block < 2000; ++block) {
      // Mostly lines that give a key, so that long runs of them are scanned.
      std::vector<std::string> lines(1 + below(60));
      for (std::string& line : lines) {
        line = below(10) < 8 ? keyed[below(keyed.size())] : plain[below(plain.size())];
      }
      blocks.check(lines, true, '\0', "set " + std::to_string(set) + ", block " +
                                          std::to_string(block));
    }
    CAPTURE(set);
    CAPTURE(validate);
    CHECK(blocks.disagreements == 0);
    const size_t lines_checked = blocks.lines_checked;
    CAPTURE(lines_checked);
    // The scan must have confirmed many of them. (In large windows fewer: from the first line
    // it cannot confirm, the rest of a window goes to the DOM parser.)
    for (const KeyExtractor& extractor : blocks.in_blocks) {
      CAPTURE(extractor.lines_from_scans());
      CHECK(extractor.lines_from_scans() > 0);
    }
    CHECK(blocks.in_blocks.back().lines_from_scans() > lines_checked / 10);
  }
}

TEST_CASE("a window's document stream does not read the line after the window") {
  // simdjson 3.0.1's stream may read the byte after the last one it parses; a ':' there once
  // made the first line an object with the key "u2". In windows of one line, each line is
  // followed by the next one's first byte.
  BlockComparison blocks(json_spec({"k"}, true));
  for (const std::string_view invalid :
       {R"({"k":"u2","k":"xu2","k"""]})", R"({"k":"u2","a""}")", R"({"k":"u2","a"})",
        R"({"k":"u2","a" "b"})", R"({"k":"u2","a"1})"}) {
    for (const std::string_view next : {R"(:"]"u3","k+":"x"})", ":", R"(:1,"k":"v"})"}) {
      blocks.check({std::string(invalid), std::string(next), R"({"k":"after"})"}, true, '\0',
                   std::string(invalid));
    }
  }
  CHECK(blocks.disagreements == 0);
}

}  // namespace keyshard

namespace keyshard {

TEST_CASE("with simdjson's portable kernel, a line's result does not depend on the line before") {
  // That kernel lets a string run on past a '\n' that follows a backslash: in one window,
  // `{"x":"\` then `"{"k":1}` once gave the second line the key 1. (Machines without the SIMD
  // instructions simdjson's other kernels need, or SIMDJSON_FORCE_IMPLEMENTATION=fallback.)
  const simdjson::implementation* fallback = simdjson::get_available_implementations()["fallback"];
  REQUIRE(fallback != nullptr);
  struct Restore {
    const simdjson::implementation* active = simdjson::get_active_implementation();
    ~Restore() { simdjson::get_active_implementation() = active; }
  } restore;
  simdjson::get_active_implementation() = fallback;
  for (const bool validate : {true, false}) {
    BlockComparison blocks(json_spec({"k"}, validate));
    blocks.check({R"({"x":"\)", R"("{"k":1})", R"({"k":2})", R"({"k":"\)", R"("})"}, true, '\0',
                 "the portable kernel");
    CAPTURE(validate);
    CHECK(blocks.disagreements == 0);
  }
}

}  // namespace keyshard
