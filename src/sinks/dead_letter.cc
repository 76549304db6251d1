#include "sinks/dead_letter.h"

#include <fmt/format.h>

#include "util/json_text.h"

namespace keyshard {

void append_dead_letter(std::string& out, const DeadLetter& letter) {
  out += "{\"source\":";
  append_json_string(out, letter.source);
  fmt::format_to(std::back_inserter(out), ",\"line\":{},\"offset\":{},\"reason\":\"{}\"",
                 letter.line_number, letter.offset, bad_reason_name(letter.reason));
  if (!letter.detail.empty()) {
    out += ",\"detail\":";
    append_json_string(out, letter.detail);
  }
  if (is_valid_utf8(letter.text)) {
    out += ",\"text\":";
    append_json_string(out, letter.text);
  } else {
    out += ",\"text_base64\":\"";
    append_base64(out, letter.text);
    out += '"';
  }
  out += "}\n";
}

}  // namespace keyshard
