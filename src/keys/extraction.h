// What key extraction says about one line: the key bytes, or why the line is a bad line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace keyshard {

/// Bytes a caller must keep readable after the end of each line it passes in (simdjson's
/// padding: its parsers read up to this far past a document).
inline constexpr size_t kLinePadding = 64;

/// Why a line is a bad line; each reason is counted apart in the summary.
enum class BadReason : uint8_t {
  kEmptyLine,    // nothing but whitespace (json format)
  kInvalidJson,  // not well-formed JSON, invalid UTF-8, or content after the object
  kNotObject,    // well-formed JSON, but not an object
  kMissingKey,   // the key path or field is absent
};
inline constexpr int kBadReasonCount = 4;

/// Stable snake_case name of a reason, as written in the summary and the dead-letter file.
std::string_view bad_reason_name(BadReason reason);

struct Extraction {
  bool ok = false;
  BadReason reason = BadReason::kInvalidJson;
  std::string_view detail;  // points at static or extractor-owned text; may be empty
  std::string_view key;     // valid until the extractor's next call
};

inline Extraction key_found(std::string_view key) { return {true, {}, {}, key}; }

/// True when `line` holds nothing but blanks: an empty line, for --format json.
inline bool is_blank_line(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

/// A composite key: the parts joined by the byte 0x1F, built in `scratch`.
template <typename Parts, typename PartOf>
std::string_view join_key_parts(const Parts& parts, PartOf part_of, std::string& scratch) {
  scratch.clear();
  bool first = true;
  for (const auto& part : parts) {
    if (!first) scratch.push_back('\x1f');
    scratch.append(part_of(part));
    first = false;
  }
  return scratch;
}
inline Extraction bad_line(BadReason reason, std::string_view detail = {}) {
  return {false, reason, detail, {}};
}

}  // namespace keyshard
