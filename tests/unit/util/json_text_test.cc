// Pins the hand-written JSON text helpers: string escaping (every byte survives, control
// characters become \u00XX), the UTF-8 validity check that decides between a JSON string and
// base64, and base64 itself against the RFC 4648 test vectors.
#include "util/json_text.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace keyshard {
namespace {

std::string json_string(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

std::string base64(std::string_view bytes) {
  std::string out;
  append_base64(out, bytes);
  return out;
}

// Encodes one code point as UTF-8 the long way, for the exhaustive checks below.
std::string utf8_of(uint32_t code_point) {
  std::string out;
  if (code_point < 0x80) {
    out.push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out.push_back(static_cast<char>(0xc0 | (code_point >> 6)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3f)));
  } else if (code_point < 0x10000) {
    out.push_back(static_cast<char>(0xe0 | (code_point >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3f)));
  } else {
    out.push_back(static_cast<char>(0xf0 | (code_point >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3f)));
  }
  return out;
}

// Decodes a JSON string literal produced by append_json_string, accepting only the escapes it
// is documented to produce. Returns false on anything else.
bool decode_json_string(std::string_view literal, std::string& out) {
  if (literal.size() < 2 || literal.front() != '"' || literal.back() != '"') return false;
  out.clear();
  for (size_t i = 1; i + 1 < literal.size(); ++i) {
    const char c = literal[i];
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '"') return false;
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (i + 2 >= literal.size()) return false;
    const char escape = literal[++i];
    switch (escape) {
      case '"': out.push_back('"'); break;
      case '\\': out.push_back('\\'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u': {
        if (i + 5 >= literal.size()) return false;
        unsigned value = 0;
        for (int k = 1; k <= 4; ++k) {
          const char h = literal[i + k];
          value <<= 4;
          if (h >= '0' && h <= '9') value |= static_cast<unsigned>(h - '0');
          else if (h >= 'a' && h <= 'f') value |= static_cast<unsigned>(h - 'a' + 10);
          else return false;  // lowercase hex only, as documented by the code
        }
        if (value > 0x7f) return false;
        out.push_back(static_cast<char>(value));
        i += 4;
        break;
      }
      default: return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("append_json_string quotes plain text unchanged") {
  CHECK(json_string("") == "\"\"");
  CHECK(json_string("user_1") == "\"user_1\"");
  CHECK(json_string("a b/c") == "\"a b/c\"");
  CHECK(json_string("é 😀 名") == "\"é 😀 名\"");
}

TEST_CASE("append_json_string appends to what is already there") {
  std::string out = "{\"k\":";
  append_json_string(out, "v");
  out += ',';
  append_json_string(out, "w");
  CHECK(out == "{\"k\":\"v\",\"w\"");
}

TEST_CASE("append_json_string escapes quotes and backslashes") {
  CHECK(json_string("\"") == "\"\\\"\"");
  CHECK(json_string("\\") == "\"\\\\\"");
  CHECK(json_string("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(json_string("\\\"") == "\"\\\\\\\"\"");
}

TEST_CASE("append_json_string uses short escapes for newline, return and tab") {
  CHECK(json_string("\n") == "\"\\n\"");
  CHECK(json_string("\r") == "\"\\r\"");
  CHECK(json_string("\t") == "\"\\t\"");
  CHECK(json_string("a\r\nb") == "\"a\\r\\nb\"");
}

TEST_CASE("append_json_string writes other control characters and DEL as \\u00XX") {
  CHECK(json_string(std::string_view("\0", 1)) == "\"\\u0000\"");
  CHECK(json_string("\x01") == "\"\\u0001\"");
  CHECK(json_string("\x08") == "\"\\u0008\"");
  CHECK(json_string("\x0b") == "\"\\u000b\"");
  CHECK(json_string("\x0c") == "\"\\u000c\"");
  CHECK(json_string("\x1b") == "\"\\u001b\"");
  CHECK(json_string("\x1f") == "\"\\u001f\"");
  CHECK(json_string("\x7f") == "\"\\u007f\"");
  CHECK(json_string(std::string_view("a\0b", 3)) == "\"a\\u0000b\"");
  // The key separator of composite keys is a control character too.
  CHECK(json_string("a\x1f" "b") == "\"a\\u001fb\"");
}

TEST_CASE("append_json_string leaves bytes 0x20..0x7e and 0x80..0xff as they are") {
  for (int byte = 0x20; byte <= 0xff; ++byte) {
    if (byte == '"' || byte == '\\' || byte == 0x7f) continue;
    CAPTURE(byte);
    const std::string text(1, static_cast<char>(byte));
    CHECK(json_string(text) == "\"" + text + "\"");
  }
}

TEST_CASE("append_json_string never loses a byte: every single byte round-trips") {
  std::string all;
  for (int byte = 0; byte < 256; ++byte) all.push_back(static_cast<char>(byte));
  for (int byte = 0; byte < 256; ++byte) {
    CAPTURE(byte);
    std::string text = "x";
    text.push_back(static_cast<char>(byte));
    text.push_back('y');
    std::string decoded;
    REQUIRE(decode_json_string(json_string(text), decoded));
    CHECK(decoded == text);
  }
  std::string decoded;
  REQUIRE(decode_json_string(json_string(all), decoded));
  CHECK(decoded == all);
}

TEST_CASE("append_json_text keeps valid UTF-8 and turns every other byte into U+FFFD") {
  auto text = [](std::string_view bytes) {
    std::string out;
    append_json_text(out, bytes);
    return out;
  };
  CHECK(text("é 😀 名") == "\"é 😀 名\"");
  CHECK(text("bad\xff.ndjson") == "\"bad\xef\xbf\xbd.ndjson\"");
  CHECK(text("\xc3") == "\"\xef\xbf\xbd\"");                       // cut short
  CHECK(text("\xc0\xaf") == "\"\xef\xbf\xbd\xef\xbf\xbd\"");   // overlong
  CHECK(text("a\xed\xa0\x80\n") == "\"a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\\n\"");
  CHECK(text("\xe9t\xc3\xa9") == "\"\xef\xbf\xbdt\xc3\xa9\"");  // Latin-1, then UTF-8
  // Whatever the bytes, the result is valid UTF-8 (so valid JSON text).
  for (int byte = 0; byte < 256; ++byte) {
    const std::string bytes{'x', static_cast<char>(byte), static_cast<char>(byte ^ 0x40), 'y'};
    CAPTURE(byte);
    CHECK(is_valid_utf8(text(bytes)));
  }
}

TEST_CASE("is_valid_utf8 accepts well-formed UTF-8") {
  CHECK(is_valid_utf8(""));
  CHECK(is_valid_utf8("plain ascii"));
  CHECK(is_valid_utf8(std::string_view("nul\0inside", 10)));
  CHECK(is_valid_utf8("\x7f"));
  CHECK(is_valid_utf8("\xc2\x80"));          // U+0080, the smallest 2-byte
  CHECK(is_valid_utf8("\xc3\xa9"));          // é
  CHECK(is_valid_utf8("\xdf\xbf"));          // U+07FF
  CHECK(is_valid_utf8("\xe0\xa0\x80"));      // U+0800, the smallest 3-byte
  CHECK(is_valid_utf8("\xed\x9f\xbf"));      // U+D7FF, just below the surrogates
  CHECK(is_valid_utf8("\xee\x80\x80"));      // U+E000, just above them
  CHECK(is_valid_utf8("\xef\xbf\xbf"));      // U+FFFF
  CHECK(is_valid_utf8("\xef\xbb\xbf"));      // a BOM is a valid character
  CHECK(is_valid_utf8("\xf0\x90\x80\x80"));  // U+10000, the smallest 4-byte
  CHECK(is_valid_utf8("\xf0\x9f\x98\x80"));  // 😀
  CHECK(is_valid_utf8("\xf4\x8f\xbf\xbf"));  // U+10FFFF, the largest
  CHECK(is_valid_utf8("mixed é and 😀 and 名 in one string"));
}

TEST_CASE("is_valid_utf8 refuses overlong encodings") {
  for (const std::string_view text :
       {"\xc0\x80", "\xc0\xaf", "\xc1\xbf", "\xe0\x80\x80", "\xe0\x9f\xbf", "\xf0\x80\x80\x80",
        "\xf0\x8f\xbf\xbf"}) {
    CAPTURE(text);
    CHECK_FALSE(is_valid_utf8(text));
  }
}

TEST_CASE("is_valid_utf8 refuses encoded surrogates") {
  for (const std::string_view text :
       {"\xed\xa0\x80", "\xed\xaf\xbf", "\xed\xb0\x80", "\xed\xbf\xbf",
        "\xed\xa0\xbd\xed\xb8\x80"}) {  // the last is CESU-8 for U+1F600
    CAPTURE(text);
    CHECK_FALSE(is_valid_utf8(text));
  }
}

TEST_CASE("is_valid_utf8 refuses code points beyond U+10FFFF and invalid lead bytes") {
  for (const std::string_view text :
       {"\xf4\x90\x80\x80", "\xf7\xbf\xbf\xbf", "\xf5\x80\x80\x80", "\xf8\x88\x80\x80\x80",
        "\xfc\x84\x80\x80\x80\x80", "\xfe", "\xff", "a\xff" "b"}) {
    CAPTURE(text);
    CHECK_FALSE(is_valid_utf8(text));
  }
}

TEST_CASE("is_valid_utf8 refuses truncated sequences and stray continuation bytes") {
  for (const std::string_view text :
       {"\xc3", "\xe0\xa0", "\xf0\x9f\x98", "\xf0\x9f", "\xf0", "a\xc3", "\xc3 ", "\xe2\x82 x",
        "\x80", "\xbf", "a\x80" "b", "\xc3\xa9\xa9", "\xf0\x9f\x98\x80\x80"}) {
    CAPTURE(text);
    CHECK_FALSE(is_valid_utf8(text));
  }
}

TEST_CASE("is_valid_utf8 finds one bad byte anywhere in a long text") {
  const std::string good = std::string(1000, 'a') + "é😀";
  REQUIRE(is_valid_utf8(good));
  for (size_t at = 0; at < good.size(); at += 37) {
    std::string text = good;
    text[at] = '\xff';
    CAPTURE(at);
    CHECK_FALSE(is_valid_utf8(text));
  }
}

TEST_CASE("is_valid_utf8 agrees with the definition for every code point") {
  size_t wrong = 0;
  for (uint32_t code_point = 0; code_point <= 0x10ffff; ++code_point) {
    const bool surrogate = code_point >= 0xd800 && code_point <= 0xdfff;
    if (is_valid_utf8(utf8_of(code_point)) == surrogate) {
      if (wrong++ < 10) {
        INFO("code point ", code_point);
        CHECK(false);
      }
    }
  }
  CHECK(wrong == 0);
}

TEST_CASE("append_base64 matches the RFC 4648 test vectors") {
  CHECK(base64("") == "");
  CHECK(base64("f") == "Zg==");
  CHECK(base64("fo") == "Zm8=");
  CHECK(base64("foo") == "Zm9v");
  CHECK(base64("foob") == "Zm9vYg==");
  CHECK(base64("fooba") == "Zm9vYmE=");
  CHECK(base64("foobar") == "Zm9vYmFy");
}

TEST_CASE("append_base64 encodes high bytes and uses + and /") {
  CHECK(base64(std::string_view("\0", 1)) == "AA==");
  CHECK(base64(std::string_view("\0\0\0", 3)) == "AAAA");
  CHECK(base64("\xff") == "/w==");
  CHECK(base64("\xff\xff\xff") == "////");
  CHECK(base64("\xfb\xff") == "+/8=");
  CHECK(base64("\xfb\xef\xbe") == "++++");
  CHECK(base64("\xc3\xa9") == "w6k=");
}

TEST_CASE("append_base64 appends and sizes its output as 4 * ceil(n / 3)") {
  std::string out = "prefix:";
  append_base64(out, "foobar");
  CHECK(out == "prefix:Zm9vYmFy");
  for (size_t size = 0; size < 50; ++size) {
    CAPTURE(size);
    const std::string bytes(size, '\x5a');
    const std::string encoded = base64(bytes);
    CHECK(encoded.size() == 4 * ((size + 2) / 3));
    const size_t padding = (3 - size % 3) % 3;
    CHECK(encoded.find('=') == (padding == 0 ? std::string::npos : encoded.size() - padding));
  }
}

}  // namespace keyshard

namespace keyshard {
namespace {

std::string terminal_string(std::string_view text) {
  std::string out;
  append_json_string_for_terminal(out, text);
  return out;
}

TEST_CASE("append_json_string_for_terminal escapes what a terminal would hide or reorder") {
  // As append_json_string for all else.
  CHECK(terminal_string("user_1") == "\"user_1\"");
  CHECK(terminal_string("é 😀 名 \"\\\n\x01") == "\"é 😀 名 \\\"\\\\\\n\\u0001\"");
  CHECK(terminal_string("") == "\"\"");
  // C1 controls, zero-width and bidirectional marks, line and paragraph separators, U+FEFF.
  CHECK(terminal_string("a\xC2\x80z\xC2\x9B") == "\"a\\u0080z\\u009b\"");
  CHECK(terminal_string("\xE2\x80\x8B") == "\"\\u200b\"");
  CHECK(terminal_string("admin\xE2\x80\xAEtxt.exe") == "\"admin\\u202etxt.exe\"");
  CHECK(terminal_string("\xE2\x80\xA8\xE2\x80\xA9") == "\"\\u2028\\u2029\"");
  CHECK(terminal_string("\xE2\x81\xA6x\xE2\x81\xA9") == "\"\\u2066x\\u2069\"");
  CHECK(terminal_string("\xEF\xBB\xBFk") == "\"\\ufeffk\"");
  CHECK(terminal_string("soft\xC2\xADhyphen\xD8\x9C\xE2\x81\xA0") ==
        "\"soft\\u00adhyphen\\u061c\\u2060\"");
  CHECK(terminal_string("\xE3\x85\xA4\xEF\xB8\x8F") == "\"\\u3164\\ufe0f\"");
  CHECK(terminal_string("a\xF3\xA0\x80\x81" "b") == "\"a\\udb40\\udc01b\"");  // U+E0001, a tag
  // Spaces other than U+0020, which look like it: no-break, en, hair, narrow no-break,
  // ideographic.
  CHECK(terminal_string("a\xC2\xA0" "b\xE2\x80\x82\xE2\x80\x8A\xE2\x80\xAF\xE3\x80\x80") ==
        "\"a\\u00a0b\\u2002\\u200a\\u202f\\u3000\"");
  // Their neighbours are shown as they are.
  CHECK(terminal_string("\xC2\xA1\xE2\x80\x90\xE2\x81\x9E\xE3\x80\x81\xEF\xBB\xBE") ==
        "\"\xC2\xA1\xE2\x80\x90\xE2\x81\x9E\xE3\x80\x81\xEF\xBB\xBE\"");
}

}  // namespace
}  // namespace keyshard
