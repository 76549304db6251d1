// A strict RFC 8259 check of one line, for the lines simdjson's DOM parser cannot take as they
// are (numbers beyond 64 bits or beyond double range are valid JSON). Slower than simdjson, so
// it runs only on those lines. Like simdjson, it refuses invalid UTF-8 and lone surrogates.
#pragma once

#include <string_view>

namespace keyshard {

enum class JsonShape { kObject, kOtherValue, kInvalid };

struct JsonGrammarVerdict {
  JsonShape shape;
  const char* problem;  // for kInvalid: what is wrong (static text)
};

/// Checks that `text` is exactly one JSON value, surrounded only by whitespace; nesting deeper
/// than 1024 is refused, as simdjson does.
JsonGrammarVerdict check_json_grammar(std::string_view text);

}  // namespace keyshard
