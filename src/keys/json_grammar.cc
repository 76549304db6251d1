#include "keys/json_grammar.h"

#include "util/json_text.h"

namespace keyshard {
namespace {

constexpr int kMaxDepth = 1024;

class GrammarChecker {
 public:
  explicit GrammarChecker(std::string_view text) : text_(text) {}

  JsonGrammarVerdict run() {
    if (!is_valid_utf8(text_)) return {JsonShape::kInvalid, "invalid UTF-8"};
    skip_space();
    const bool object = peek() == '{';
    if (!value(0)) return {JsonShape::kInvalid, problem_};
    skip_space();
    if (at_ < text_.size()) return {JsonShape::kInvalid, "content after the JSON value"};
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
  static bool digit(char c) { return c >= '0' && c <= '9'; }
  void digits() {
    while (digit(peek())) ++at_;
  }

  bool number() {
    if (peek() == '-') ++at_;
    if (peek() == '0') {
      ++at_;
    } else if (digit(peek())) {
      digits();
    } else {
      return fail("invalid number");
    }
    if (peek() == '.') {
      ++at_;
      if (!digit(peek())) return fail("invalid number");
      digits();
    }
    if (peek() == 'e' || peek() == 'E') {
      ++at_;
      if (peek() == '+' || peek() == '-') ++at_;
      if (!digit(peek())) return fail("invalid number");
      digits();
    }
    return true;
  }

  bool hex4(unsigned& code) {
    if (at_ + 4 > text_.size()) return fail("invalid \\u escape");
    code = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[at_++];
      code <<= 4;
      if (digit(c)) code |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') code |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') code |= static_cast<unsigned>(c - 'A' + 10);
      else return fail("invalid \\u escape");
    }
    return true;
  }

  bool string() {
    ++at_;  // the opening quote
    for (;;) {
      if (at_ >= text_.size()) return fail("unclosed string");
      const auto c = static_cast<unsigned char>(text_[at_++]);
      if (c == '"') return true;
      if (c < 0x20) return fail("unescaped control character in a string");
      if (c != '\\') continue;
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

  bool value(int depth) {
    switch (peek()) {
      case '{': return object(depth + 1);
      case '[': return array(depth + 1);
      case '"': return string();
      case 't': return literal("true");
      case 'f': return literal("false");
      case 'n': return literal("null");
      default: return number();
    }
  }

  bool object(int depth) {
    if (depth > kMaxDepth) return fail("nested too deeply");
    ++at_;
    skip_space();
    if (peek() == '}') {
      ++at_;
      return true;
    }
    for (;;) {
      skip_space();
      if (peek() != '"') return fail("expected a member name");
      if (!string()) return false;
      skip_space();
      if (peek() != ':') return fail("expected ':' after a member name");
      ++at_;
      skip_space();
      if (!value(depth)) return false;
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

  bool array(int depth) {
    if (depth > kMaxDepth) return fail("nested too deeply");
    ++at_;
    skip_space();
    if (peek() == ']') {
      ++at_;
      return true;
    }
    for (;;) {
      skip_space();
      if (!value(depth)) return false;
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
  size_t at_ = 0;
  const char* problem_ = "invalid JSON";
};

}  // namespace

JsonGrammarVerdict check_json_grammar(std::string_view text) {
  return GrammarChecker(text).run();
}

}  // namespace keyshard
