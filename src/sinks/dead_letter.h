// The dead-letter record: one JSON object per bad line, saying where it came from and why it
// was refused, with the line itself. A line that is not valid UTF-8 is kept as base64, so no
// byte is ever lost.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "keys/extraction.h"
#include "util/status.h"

namespace keyshard {

struct DeadLetter {
  std::string_view source;  // input name
  uint64_t line_number;     // 1-based within that input
  uint64_t offset;          // byte offset of the line within that input (decompressed)
  BadReason reason;
  std::string_view detail;
  std::string_view text;    // the line, without its '\n'
};

/// Appends one record, ending with '\n':
/// {"source":..,"line":..,"offset":..,"reason":..,"detail":..,"text":..} ("text_base64" instead
/// of "text" for a line that is not valid UTF-8).
void append_dead_letter(std::string& out, const DeadLetter& letter);

/// The same record, for a line of any length in bounded memory: whenever `out` holds
/// `spill_at` bytes or more it is handed to `spill`, which writes it out and empties it.
Status append_dead_letter(std::string& out, const DeadLetter& letter, size_t spill_at,
                          const std::function<Status(std::string&)>& spill);

}  // namespace keyshard
