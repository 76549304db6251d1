#include "sinks/dead_letter.h"

#include <fmt/format.h>

#include "util/json_text.h"

namespace keyshard {

void append_dead_letter(std::string& out, const DeadLetter& letter) {
  out += '{';
  append_json_bytes_member(out, "source", letter.source);
  fmt::format_to(std::back_inserter(out), ",\"line\":{},\"offset\":{},\"reason\":\"{}\"",
                 letter.line_number, letter.offset, bad_reason_name(letter.reason));
  if (!letter.detail.empty()) {
    out += ",\"detail\":";
    append_json_text(out, letter.detail);
  }
  out += ',';
  append_json_bytes_member(out, "text", letter.text);
  out += "}\n";
}

}  // namespace keyshard
