// Writing JSON text by hand for the few records keyshard emits (dead letters, the summary):
// string escaping that never loses a byte, and a UTF-8 validity check to choose the encoding.
#pragma once

#include <string>
#include <string_view>

namespace keyshard {

/// Appends `text` as a quoted JSON string. Control characters become \u00XX escapes; the
/// text must be valid UTF-8 for the result to be valid JSON (see is_valid_utf8).
void append_json_string(std::string& out, std::string_view text);
/// What append_json_string() puts between the quotes. Byte by byte: text cut anywhere, even
/// inside a UTF-8 sequence, gives the same escaped text piece by piece.
void append_json_string_body(std::string& out, std::string_view text);

/// As append_json_string, for a terminal: the characters that show as nothing or reorder the
/// text around them (C1 controls, the soft hyphen, zero-width, format and bidirectional marks,
/// fillers, variation selectors, tags) are \u escapes too, so that a key shown cannot pass for
/// another. `text`: valid UTF-8.
void append_json_string_for_terminal(std::string& out, std::string_view text);

/// Appends `text` as a quoted JSON string that is always valid JSON, for names shown to people
/// (an input's path, say): a byte that is not part of valid UTF-8 becomes U+FFFD.
void append_json_text(std::string& out, std::string_view text);

/// Appends `bytes` as a JSON string when they are valid UTF-8, else as {"base64":"<base64>"},
/// so that no byte is lost (a file name, say).
void append_json_bytes(std::string& out, std::string_view bytes);

/// True when `text` is well-formed UTF-8 (no overlongs, no surrogates, nothing past U+10FFFF).
bool is_valid_utf8(std::string_view text);

/// Appends the member `"name":"bytes"` when `bytes` is valid UTF-8, else
/// `"name_base64":"<base64>"`, so that no byte is lost; `colon` goes between name and value.
void append_json_bytes_member(std::string& out, std::string_view name, std::string_view bytes,
                              std::string_view colon = ":");

/// Appends `bytes` encoded as standard base64 with padding.
void append_base64(std::string& out, std::string_view bytes);

}  // namespace keyshard

namespace keyshard {

/// Decodes standard base64 (padding required); false when `text` is not valid base64.
bool decode_base64(std::string_view text, std::string& out);

}  // namespace keyshard
