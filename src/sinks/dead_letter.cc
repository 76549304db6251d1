#include "sinks/dead_letter.h"

#include <fmt/format.h>

#include "util/json_text.h"

namespace keyshard {

void append_dead_letter(std::string& out, const DeadLetter& letter) {
  (void)append_dead_letter(out, letter, SIZE_MAX, [](std::string&) { return Status{}; });
}

Status append_dead_letter(std::string& out, const DeadLetter& letter, size_t spill_at,
                          const std::function<Status(std::string&)>& spill) {
  out += '{';
  append_json_bytes_member(out, "source", letter.source);
  fmt::format_to(std::back_inserter(out), ",\"line\":{},\"offset\":{},\"reason\":\"{}\"",
                 letter.line_number, letter.offset, bad_reason_name(letter.reason));
  if (!letter.detail.empty()) {
    out += ",\"detail\":";
    append_json_text(out, letter.detail);
  }
  // The line, escaped (or in base64) a piece at a time: a long line of control characters
  // grows six-fold in JSON, and only a piece of that is held at once.
  const bool text = is_valid_utf8(letter.text);
  out += text ? ",\"text\":\"" : ",\"text_base64\":\"";
  constexpr size_t kPiece = 3 << 14;  // a multiple of 3: base64 pieces join without padding
  for (size_t at = 0; at < letter.text.size(); at += kPiece) {
    const std::string_view piece = letter.text.substr(at, kPiece);
    if (text) {
      append_json_string_body(out, piece);
    } else {
      append_base64(out, piece);
    }
    if (out.size() >= spill_at) {
      if (Status status = spill(out); !status) return status;
    }
  }
  out += "\"}\n";
  return {};
}

}  // namespace keyshard
