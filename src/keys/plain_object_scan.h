// The fast path of validated key extraction. Most event lines are plain JSON objects whose key
// is a string or a number. For a window of such lines, simdjson's stage 1 (its SIMD structural
// index, which also checks UTF-8, string quoting and control characters) is all the parsing
// they need: a walk over the index checks the rest of the grammar (the structure, numbers,
// literals and any escape sequences) and finds the key, without building simdjson's tree.
//
// The scan only says what it is sure of: a valid object and its key, or a valid object without
// it (with --no-validate, stopping at the key: an object valid up to its key, in a line that
// ends with '}', which the On Demand walker would read the same). For any other line (invalid,
// the key an object, an array or escaped, an escaped member name where a -k name could be,
// nested deeper than kMaxScanDepth) it says so, and that line is judged by simdjson's DOM
// parser (or the walker) as before. So a line's result never depends on the scan.
//
// Stage 1 is reached through dom::parser::implementation, which simdjson documents as
// available for benchmarking; meson.build pins simdjson's major version for it.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "keys/key_trie.h"

namespace keyshard {

/// Objects and arrays nested deeper than this are left to the DOM parser.
inline constexpr int kMaxScanDepth = 64;

enum class ScanVerdict {
  kConfirmed,  // certainly one valid JSON object, every -k path leading to an unescaped string,
               // a number or a literal
  kMissing,    // certainly one valid JSON object, in which a -k path leads nowhere
  kEscapes,    // an escape sequence the scan does not judge: invalid, a surrogate standing
               // alone, in the key, or in a member name where a -k name could be
  kUnsure,     // anything else (invalid, the key an object or an array, nested too deep…)
};

class PlainObjectScan {
 public:
  /// `trie`: the -k paths; it must outlive the scan.
  explicit PlainObjectScan(const KeyTrie& trie);

  /// False when no line can be confirmed (a -k name holds a quote, a backslash or a control
  /// character, or a trie node has more than 64 children).
  bool usable() const { return usable_; }

  /// Indexes a window of whole lines, `size` bytes at `text` followed by at least
  /// simdjson::SIMDJSON_PADDING readable bytes. False when stage 1 refuses the window (invalid
  /// UTF-8, a string left open or holding a control character, nothing but whitespace): then
  /// no line of it can be confirmed.
  bool index(const char* text, size_t size);

  /// What the scan can say of `line` (a line of the indexed window, without its '\n'; lines
  /// in order). When kConfirmed, `parts` holds each key part's bytes (views into the line);
  /// when kMissing, a missing part is a view with no data (nullptr).
  /// With `stop_at_key` (--no-validate), kConfirmed once every key part is found in a valid
  /// start of a line that ends with '}', whatever lies between.
  ScanVerdict confirm(std::string_view line, std::vector<std::string_view>& parts,
                      bool stop_at_key = false);

 private:
  ScanVerdict walk(const char* line_end, bool escapes, bool stop_at_key,
                   std::vector<std::string_view>& parts);

  const KeyTrie& trie_;
  std::vector<uint64_t> every_child_;  // per trie node: a bit for each of its children
  bool usable_ = true;
  simdjson::dom::parser indexer_;  // only its stage 1 and structural index are used
  const char* text_ = nullptr;
  const uint32_t* next_ = nullptr;  // the first structural not yet walked
  const uint32_t* end_ = nullptr;
  const char* backslash_ = nullptr;  // the first '\\' at or after the current line, or end
  const char* window_end_ = nullptr;
};

}  // namespace keyshard
