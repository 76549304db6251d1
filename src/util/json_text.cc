#include "util/json_text.h"

#include <simdjson.h>

#include <cstdint>

namespace keyshard {

void append_json_string(std::string& out, std::string_view text) {
  out.push_back('"');
  append_json_string_body(out, text);
  out.push_back('"');
}

namespace {

constexpr char kHex[] = "0123456789abcdef";

// Whether a terminal shows code point `code` as nothing, lets it reorder the text around it, or
// shows it as a plain space: C1 controls, the soft hyphen, format and bidirectional marks,
// fillers, variation selectors, tags, and the spaces other than U+0020 (no-break, en, em, thin,
// ideographic, ...).
bool hidden_on_terminal(uint32_t code) {
  return (code >= 0x80 && code <= 0xa0) || code == 0xad || code == 0x1680 ||
         (code >= 0x2000 && code <= 0x200a) || code == 0x202f || code == 0x205f ||
         code == 0x3000 || code == 0x34f || code == 0x61c ||
         code == 0x115f || code == 0x1160 || code == 0x17b4 || code == 0x17b5 ||
         (code >= 0x180b && code <= 0x180f) || (code >= 0x200b && code <= 0x200f) ||
         (code >= 0x2028 && code <= 0x202e) || (code >= 0x2060 && code <= 0x206f) ||
         code == 0x3164 || (code >= 0xfe00 && code <= 0xfe0f) || code == 0xfeff ||
         code == 0xffa0 || (code >= 0xfff0 && code <= 0xfffb) ||
         (code >= 0x1d173 && code <= 0x1d17a) || (code >= 0xe0000 && code <= 0xe0fff);
}

void append_u_escape(std::string& out, uint32_t unit) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out.push_back(kHex[(unit >> shift) & 0xf]);
}

}  // namespace

void append_json_string_for_terminal(std::string& out, std::string_view text) {
  out.push_back('"');
  size_t plain = 0;  // the start of the bytes not yet appended
  size_t i = 0;
  while (i < text.size()) {
    // One character of valid UTF-8: its length from the lead byte, then its code point.
    const auto lead = static_cast<unsigned char>(text[i]);
    const size_t length = lead < 0x80 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
    if (length == 1 || i + length > text.size()) {
      i += 1;
      continue;
    }
    uint32_t code = lead & (0x7fu >> length);
    for (size_t k = 1; k < length; ++k) code = (code << 6) | (text[i + k] & 0x3fu);
    if (hidden_on_terminal(code)) {
      append_json_string_body(out, text.substr(plain, i - plain));
      if (code < 0x10000) {
        append_u_escape(out, code);
      } else {  // as a JSON escape writes it: a surrogate pair
        append_u_escape(out, 0xd800 + ((code - 0x10000) >> 10));
        append_u_escape(out, 0xdc00 + ((code - 0x10000) & 0x3ff));
      }
      plain = i + length;
    }
    i += length;
  }
  append_json_string_body(out, text.substr(plain));
  out.push_back('"');
}

void append_json_string_body(std::string& out, std::string_view text) {
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (byte < 0x20 || byte == 0x7f) {
          out += "\\u00";
          out.push_back(kHex[byte >> 4]);
          out.push_back(kHex[byte & 0xf]);
        } else {
          out.push_back(c);
        }
    }
  }
}

bool is_valid_utf8(std::string_view text) {
  return simdjson::validate_utf8(text.data(), text.size());
}

void append_json_bytes(std::string& out, std::string_view bytes) {
  if (is_valid_utf8(bytes)) {
    append_json_string(out, bytes);
    return;
  }
  out += "{\"base64\":\"";
  append_base64(out, bytes);
  out += "\"}";
}

void append_json_text(std::string& out, std::string_view text) {
  if (is_valid_utf8(text)) {
    append_json_string(out, text);
    return;
  }
  std::string clean;
  for (size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const size_t length = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    if (i + length <= text.size() && is_valid_utf8(text.substr(i, length))) {
      clean += text.substr(i, length);
      i += length;
    } else {
      clean += "\xef\xbf\xbd";  // U+FFFD
      ++i;
    }
  }
  append_json_string(out, clean);
}

void append_json_bytes_member(std::string& out, std::string_view name, std::string_view bytes,
                              std::string_view colon) {
  out += '"';
  out += name;
  if (is_valid_utf8(bytes)) {
    out += '"';
    out += colon;
    append_json_string(out, bytes);
  } else {
    out += "_base64\"";
    out += colon;
    out += '"';
    append_base64(out, bytes);
    out += '"';
  }
}

void append_base64(std::string& out, std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = (static_cast<unsigned char>(bytes[i]) << 16) |
                       (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back(kAlphabet[v & 63]);
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t v = static_cast<unsigned char>(bytes[i]) << 16;
    if (rest == 2) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
}

}  // namespace keyshard

namespace keyshard {

bool decode_base64(std::string_view text, std::string& out) {
  out.clear();
  if (text.size() % 4 != 0) return false;
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const size_t padding = last ? (text[i + 3] == '=') + (text[i + 2] == '=') : 0;
    if (padding == 1 && text[i + 2] == '=') return false;
    uint32_t bits = 0;
    for (size_t k = 0; k < 4; ++k) {
      const int v = k >= 4 - padding ? 0 : value(text[i + k]);
      if (v < 0) return false;
      bits = (bits << 6) | static_cast<uint32_t>(v);
    }
    out.push_back(static_cast<char>(bits >> 16));
    if (padding < 2) out.push_back(static_cast<char>((bits >> 8) & 0xff));
    if (padding < 1) out.push_back(static_cast<char>(bits & 0xff));
  }
  return true;
}

}  // namespace keyshard
