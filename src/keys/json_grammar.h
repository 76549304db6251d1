// A strict RFC 8259 check of one line, for the lines simdjson's DOM parser cannot take as they
// are (numbers beyond 64 bits or beyond double range are valid JSON) or should not (a line so
// long that the parser's tree, many times its size, would cost too much memory). Slower than
// simdjson, so it runs only on those lines; its memory does not grow with the line. Like
// simdjson, it refuses invalid UTF-8 and lone surrogates. It can also note where the -k paths'
// values are, in the same pass.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "keys/key_trie.h"

namespace keyshard {

enum class JsonShape { kObject, kOtherValue, kInvalid };

struct JsonGrammarVerdict {
  JsonShape shape;
  const char* problem;  // for kInvalid: what is wrong (static text)
};

/// Checks that `text` is exactly one JSON value, surrounded only by whitespace; nesting is
/// refused where simdjson refuses it (a non-empty object or array at depth 1024). With `keys`,
/// `values` receives, per key part, the exact text of the first value found at its path (a
/// string with its quotes), or nullopt. As everywhere in keyshard, the first of duplicate
/// members is the one that counts.
JsonGrammarVerdict check_json_grammar(std::string_view text, const KeyTrie* keys = nullptr,
                                      std::vector<std::optional<std::string_view>>* values =
                                          nullptr);

/// The content of a JSON string that check_json_grammar accepted, `quoted` with its quotes,
/// unescaped to UTF-8 into `out`.
void unescape_json_string(std::string_view quoted, std::string& out);

}  // namespace keyshard
