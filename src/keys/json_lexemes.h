// The two small pieces of RFC 8259's grammar that both JSON checkers read byte by byte: a
// number, and the four hex digits of a \u escape. The plain-object scan (plain_object_scan.cc)
// and the strict grammar check (json_grammar.cc) read them here, so that the two cannot come
// to disagree about what a number is.
#pragma once

#include <optional>

namespace keyshard {

inline bool is_json_digit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

/// Where the JSON number that starts at `at` ends: the first byte after it, at most `limit`.
/// nullptr when none starts there, or when it is cut short (a sign, a '.' or an exponent
/// without digits). A leading zero ends the integer part ("01" is the number 0, then "1"), and
/// what may follow the number is the caller's to check.
inline const char* json_number_end(const char* at, const char* limit) {
  const char* p = at;
  if (p < limit && *p == '-') ++p;
  if (p == limit || !is_json_digit(*p)) return nullptr;
  if (*p++ != '0') {
    while (p < limit && is_json_digit(*p)) ++p;
  }
  if (p < limit && *p == '.') {
    if (++p == limit || !is_json_digit(*p)) return nullptr;
    while (p < limit && is_json_digit(*p)) ++p;
  }
  if (p < limit && (*p == 'e' || *p == 'E')) {
    if (++p < limit && (*p == '+' || *p == '-')) ++p;
    if (p == limit || !is_json_digit(*p)) return nullptr;
    while (p < limit && is_json_digit(*p)) ++p;
  }
  return p;
}

/// The value of the four hex digits (either case) at `at`, or nullopt when any of the four is
/// not one, or fewer than four come before `limit`.
inline std::optional<unsigned> json_hex4(const char* at, const char* limit) {
  if (limit - at < 4) return std::nullopt;
  unsigned code = 0;
  for (int i = 0; i < 4; ++i) {
    const char c = at[i];
    unsigned digit = 0;
    if (is_json_digit(c)) {
      digit = static_cast<unsigned>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<unsigned>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      digit = static_cast<unsigned>(c - 'A' + 10);
    } else {
      return std::nullopt;
    }
    code = code << 4 | digit;
  }
  return code;
}

}  // namespace keyshard
