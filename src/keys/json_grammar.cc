#include "keys/json_grammar.h"

#include "keys/json_lexemes.h"
#include "util/json_text.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace keyshard {
namespace {

constexpr int kMaxDepth = 1024;
constexpr uint32_t kNoNode = KeyTrie::kNoNode;

#if defined(__SSE2__)
// How many of the 16 bytes at `block` come before the first that ends a run of plain string
// content: '"', '\\' or a control character (16 when there is none).
unsigned plain_string_bytes(const char* block) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block));
  const __m128i limit = _mm_set1_epi8(0x1f);
  const __m128i special =
      _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('"')),
                                _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\\'))),
                   _mm_cmpeq_epi8(_mm_max_epu8(bytes, limit), limit));  // bytes <= 0x1f
  const auto mask = static_cast<unsigned>(_mm_movemask_epi8(special));
  return mask == 0 ? 16 : static_cast<unsigned>(__builtin_ctz(mask));
}
#endif

void append_utf8(unsigned code, std::string& out) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xc0 | code >> 6);
    out += static_cast<char>(0x80 | (code & 0x3f));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xe0 | code >> 12);
    out += static_cast<char>(0x80 | (code >> 6 & 0x3f));
    out += static_cast<char>(0x80 | (code & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | code >> 18);
    out += static_cast<char>(0x80 | (code >> 12 & 0x3f));
    out += static_cast<char>(0x80 | (code >> 6 & 0x3f));
    out += static_cast<char>(0x80 | (code & 0x3f));
  }
}

}  // namespace

void unescape_json_string(std::string_view quoted, std::string& out) {
  out.clear();
  const std::string_view body = quoted.substr(1, quoted.size() - 2);
  for (size_t at = 0; at < body.size(); ++at) {
    const char c = body[at];
    if (c != '\\') {
      out += c;
      continue;
    }
    const char escape = body[++at];
    switch (escape) {
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        const char* limit = body.data() + body.size();
        unsigned code = *json_hex4(body.data() + at + 1, limit);
        at += 4;
        if (code >= 0xd800 && code <= 0xdbff) {  // a high surrogate: its low one follows
          const unsigned low = *json_hex4(body.data() + at + 3, limit);
          at += 6;
          code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        }
        append_utf8(code, out);
        break;
      }
      default: out += escape;  // " \ /
    }
  }
}

class GrammarChecker {
 public:
  GrammarChecker(std::string_view text, const KeyTrie* keys,
                 std::vector<std::optional<std::string_view>>* values)
      : text_(text), keys_(keys), values_(values) {
    if (values_) values_->assign(keys_ ? keys_->parts : 0, std::nullopt);
  }

  JsonGrammarVerdict run() {
    if (!is_valid_utf8(text_)) return {JsonShape::kInvalid, "invalid UTF-8"};
    skip_space();
    if (text_.substr(at_).starts_with("\xEF\xBB\xBF")) {  // as a Windows editor may save a file
      return {JsonShape::kInvalid, "a byte order mark (U+FEFF) before the JSON value"};
    }
    const bool object = peek() == '{';
    if (!value(0, keys_ && values_ ? 0 : kNoNode)) return {JsonShape::kInvalid, problem_};
    const size_t value_end = at_;
    skip_space();
    if (at_ < text_.size()) {
      // (Lines ended by a carriage return alone read as one line: say so.)
      const std::string_view between = text_.substr(value_end, at_ - value_end);
      const bool after_cr = between.find('\r') != std::string_view::npos;
      return {JsonShape::kInvalid, after_cr ? "content after the JSON value, past a carriage "
                                              "return (are the lines ended by CR alone?)"
                                            : "content after the JSON value"};
    }
    return {object ? JsonShape::kObject : JsonShape::kOtherValue, nullptr};
  }

 private:
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  bool fail(const char* problem) {
    problem_ = problem;
    return false;
  }
  void skip_space() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r')) {
      ++at_;
    }
  }
  bool literal(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return fail("invalid literal");
    at_ += word.size();
    return true;
  }

  bool number() {
    const char* begin = text_.data() + at_;
    const char* end = json_number_end(begin, text_.data() + text_.size());
    if (end == nullptr) {
      // Where no number could start, no JSON value does ("bad line", "{a:1}"); where a sign
      // or a digit came, a number did and was cut short.
      return fail(peek() == '-' || is_json_digit(peek()) ? "invalid number" : "not a JSON value");
    }
    at_ += static_cast<size_t>(end - begin);
    return true;
  }

  bool hex4(unsigned& code) {
    const std::optional<unsigned> read =
        json_hex4(text_.data() + at_, text_.data() + text_.size());
    if (!read) return fail("invalid \\u escape");
    code = *read;
    at_ += 4;
    return true;
  }

  // `escaped`: set when the string holds an escape sequence.
  bool string(bool& escaped) {
    ++at_;  // the opening quote
    for (;;) {
#if defined(__SSE2__)
      // Plain content 16 bytes at a time, while 16 bytes of the line are left.
      while (at_ + 16 <= text_.size()) {
        const unsigned plain = plain_string_bytes(text_.data() + at_);
        at_ += plain;
        if (plain < 16) break;
      }
#endif
      if (at_ >= text_.size()) return fail("unclosed string");
      const auto c = static_cast<unsigned char>(text_[at_++]);
      if (c == '"') return true;
      if (c < 0x20) return fail("unescaped control character in a string");
      if (c != '\\') continue;
      escaped = true;
      const char escape = peek();
      ++at_;
      if (escape == 'u') {
        unsigned code = 0;
        if (!hex4(code)) return false;
        if (code >= 0xdc00 && code <= 0xdfff) return fail("lone low surrogate");
        if (code >= 0xd800 && code <= 0xdbff) {
          unsigned low = 0;
          if (text_.substr(at_, 2) != "\\u") return fail("lone high surrogate");
          at_ += 2;
          if (!hex4(low)) return false;
          if (low < 0xdc00 || low > 0xdfff) return fail("lone high surrogate");
        }
      } else if (std::string_view("\"\\/bfnrt").find(escape) == std::string_view::npos) {
        return fail("invalid escape in a string");
      }
    }
  }

  // `node`: where the value sits in the key trie (kNoNode: on no -k path).
  bool value(int depth, uint32_t node) {
    const size_t start = at_;
    bool good = false;
    switch (peek()) {
      case '{': good = object(depth + 1, node); break;
      case '[': good = array(depth + 1, node); break;
      case '"': {
        bool escaped = false;
        good = string(escaped);
        break;
      }
      case 't': good = literal("true"); break;
      case 'f': good = literal("false"); break;
      case 'n': good = literal("null"); break;
      default: good = number();
    }
    if (good && node != kNoNode) {
      for (const uint32_t part : keys_->nodes[node].parts) {
        auto& found = (*values_)[part];
        if (!found) found = text_.substr(start, at_ - start);
      }
    }
    return good;
  }

  // The trie node of member `quoted_name` of an object at `node`, unless a member of that name
  // came earlier in the same object (`matched`: the children matched so far).
  // (`escaped`: the name holds an escape sequence.)
  uint32_t member_node(uint32_t node, std::string_view quoted_name, bool escaped,
                       uint64_t& matched) {
    if (node == kNoNode) return kNoNode;
    const auto& children = keys_->nodes[node].children;
    if (children.empty()) return kNoNode;
    std::string_view name = quoted_name.substr(1, quoted_name.size() - 2);
    if (escaped) {
      unescape_json_string(quoted_name, name_scratch_);
      name = name_scratch_;
    }
    for (size_t i = 0; i < children.size() && i < 64; ++i) {
      if (children[i].name == name) {
        if (matched & (1ull << i)) return kNoNode;  // a duplicate: the first one counts
        matched |= 1ull << i;
        return children[i].node;
      }
    }
    return kNoNode;
  }

  uint32_t element_node(uint32_t node, uint64_t index) const {
    if (node == kNoNode) return kNoNode;
    for (const auto& child : keys_->nodes[node].children) {
      if (child.array_index == index) return child.node;
    }
    return kNoNode;
  }

  // As simdjson counts: an empty object or array adds no depth; a non-empty one at depth
  // kMaxDepth is refused.
  bool object(int depth, uint32_t node) {
    ++at_;
    skip_space();
    if (peek() == '}') {
      ++at_;
      return true;
    }
    if (depth >= kMaxDepth) return fail("nested too deeply");
    uint64_t matched = 0;
    for (;;) {
      skip_space();
      if (peek() != '"') return fail("expected a member name");
      const size_t name_start = at_;
      bool escaped = false;
      if (!string(escaped)) return false;
      const uint32_t child =
          member_node(node, text_.substr(name_start, at_ - name_start), escaped, matched);
      skip_space();
      if (peek() != ':') return fail("expected ':' after a member name");
      ++at_;
      skip_space();
      if (!value(depth, child)) return false;
      skip_space();
      if (peek() == ',') {
        ++at_;
        continue;
      }
      if (peek() == '}') {
        ++at_;
        return true;
      }
      return fail("expected ',' or '}' in an object");
    }
  }

  bool array(int depth, uint32_t node) {
    ++at_;
    skip_space();
    if (peek() == ']') {
      ++at_;
      return true;
    }
    if (depth >= kMaxDepth) return fail("nested too deeply");
    for (uint64_t index = 0;; ++index) {
      skip_space();
      if (!value(depth, element_node(node, index))) return false;
      skip_space();
      if (peek() == ',') {
        ++at_;
        continue;
      }
      if (peek() == ']') {
        ++at_;
        return true;
      }
      return fail("expected ',' or ']' in an array");
    }
  }

  std::string_view text_;
  const KeyTrie* keys_;
  std::vector<std::optional<std::string_view>>* values_;
  size_t at_ = 0;
  const char* problem_ = "invalid JSON";
  std::string name_scratch_;
};

JsonGrammarVerdict check_json_grammar(std::string_view text, const KeyTrie* keys,
                                      std::vector<std::optional<std::string_view>>* values) {
  return GrammarChecker(text, keys, values).run();
}

}  // namespace keyshard
