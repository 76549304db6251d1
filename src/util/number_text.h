// Counts as people read them in reports: with thousands separators.
#pragma once

#include <cstdint>
#include <string>

namespace keyshard {

/// `value` in decimal with a comma between each group of three digits (1,234,567).
inline std::string with_commas(uint64_t value) {
  const std::string digits = std::to_string(value);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

}  // namespace keyshard
