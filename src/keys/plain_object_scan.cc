#include "keys/plain_object_scan.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "keys/json_lexemes.h"

namespace keyshard {
namespace {

// Whether `c` may follow a value inside an object or an array.
bool ends_value(char c) {
  return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\r';
}

const char* literal_end(const char* at, const char* limit, std::string_view word) {
  const bool whole = static_cast<size_t>(limit - at) > word.size() &&
                     std::memcmp(at, word.data(), word.size()) == 0 && ends_value(at[word.size()]);
  return whole ? at + word.size() : nullptr;
}

// Where the number or literal that starts at `at` (before `limit`, the end of the line) ends,
// if one does and is followed, within the line, by a byte that may follow a value inside a
// container; else nullptr.
const char* scalar_end(const char* at, const char* limit) {
  switch (*at) {
    case 't': return literal_end(at, limit, "true");
    case 'f': return literal_end(at, limit, "false");
    case 'n': return literal_end(at, limit, "null");
    default: break;
  }
  const char* p = json_number_end(at, limit);
  return p != nullptr && p < limit && ends_value(*p) ? p : nullptr;
}

// Whether every backslash from `at` (the first in the line) to `limit` starts a valid escape
// sequence, a surrogate pair written as two \u escapes included. Stage 1 paired the quotes
// and the walk then checks that no backslash lies outside a string, so reading the escapes
// one after another from the first finds each one's start.
bool escapes_valid(const char* at, const char* limit) {
  while (at != nullptr) {
    if (limit - at < 2) return false;
    switch (at[1]) {
      case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
        at += 2;
        break;
      case 'u': {
        const std::optional<unsigned> code = json_hex4(at + 2, limit);
        if (!code || (*code >= 0xdc00 && *code <= 0xdfff)) return false;
        at += 6;
        if (*code >= 0xd800 && *code <= 0xdbff) {  // a low surrogate must follow
          if (limit - at < 2 || at[0] != '\\' || at[1] != 'u') return false;
          const std::optional<unsigned> low = json_hex4(at + 2, limit);
          if (!low || *low < 0xdc00 || *low > 0xdfff) return false;
          at += 6;
        }
        break;
      }
      default: return false;
    }
    at = static_cast<const char*>(std::memchr(at, '\\', static_cast<size_t>(limit - at)));
  }
  return true;
}

bool plain_name(std::string_view name) {
  return std::none_of(name.begin(), name.end(), [](char c) {
    return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
  });
}

}  // namespace

PlainObjectScan::PlainObjectScan(const KeyTrie& trie) : trie_(trie) {
  for (const KeyTrie::Node& node : trie_.nodes) {
    if (node.children.size() > 64) usable_ = false;
    const size_t children = std::min<size_t>(node.children.size(), 64);
    every_child_.push_back(children == 64 ? ~uint64_t{0} : (uint64_t{1} << children) - 1);
    for (const KeyTrie::Child& child : node.children) {
      if (!plain_name(child.name)) usable_ = false;
    }
  }
}

bool PlainObjectScan::index(const char* text, size_t size) {
  text_ = text;
  next_ = end_ = nullptr;
  window_end_ = text + size;
  if (!usable_ || size == 0) return false;
  if (!indexer_.implementation || indexer_.capacity() < size) {
    const size_t capacity = (size + 0xffff) & ~size_t{0xffff};
    if (indexer_.allocate(capacity) != simdjson::SUCCESS) {
      indexer_ = simdjson::dom::parser();  // (part way allocated: not to be used again)
      return false;
    }
  }
  simdjson::internal::dom_parser_implementation& stage1 = *indexer_.implementation;
  if (stage1.stage1(reinterpret_cast<const uint8_t*>(text), size,
                    simdjson::stage1_mode::regular) != simdjson::SUCCESS) {
    return false;
  }
  next_ = stage1.structural_indexes.get();
  end_ = next_ + stage1.n_structural_indexes;
  // Stage 1 ends the index with the window's size (and room for it): no line reaches that
  // far, so a walk stops there without comparing against end_.
  stage1.structural_indexes[stage1.n_structural_indexes] = static_cast<uint32_t>(size);
  const auto* backslash = static_cast<const char*>(std::memchr(text, '\\', size));
  backslash_ = backslash != nullptr ? backslash : window_end_;
  return true;
}

ScanVerdict PlainObjectScan::confirm(std::string_view line, std::vector<std::string_view>& parts,
                                     bool stop_at_key) {
  const char* begin = line.data();
  const char* end = begin + line.size();
  if (next_ == nullptr || begin < text_ || end > window_end_) return ScanVerdict::kUnsure;
  if (stop_at_key) {
    // Stopping at the key, the walker still refuses a line whose last structural is not the
    // root object's '}' (simdjson On Demand's check of a root object); here, where stage 1
    // accepted the window, that is its last byte before any whitespace.
    const char* last = end;
    while (last > begin && (last[-1] == ' ' || last[-1] == '\t' || last[-1] == '\r')) --last;
    if (last == begin || last[-1] != '}') return ScanVerdict::kUnsure;
  }
  if (backslash_ < begin) {
    const auto* backslash = static_cast<const char*>(
        std::memchr(begin, '\\', static_cast<size_t>(window_end_ - begin)));
    backslash_ = backslash != nullptr ? backslash : window_end_;
  }
  const bool escapes = backslash_ < end;
  if (escapes && !escapes_valid(backslash_, end)) return ScanVerdict::kEscapes;
  const auto line_begin = static_cast<uint32_t>(begin - text_);
  while (next_ < end_ && *next_ < line_begin) ++next_;  // (a line passed over)
  std::fill(parts.begin(), parts.end(), std::string_view{});
  return walk(end, escapes, stop_at_key, parts);
}

// A walk over the line's structurals: the next one's byte is peek() ('\0' past the line).
// Each label is a point of the JSON grammar; the containers entered are on `stack`.
ScanVerdict PlainObjectScan::walk(const char* line_end, bool escapes, bool stop_at_key,
                                  std::vector<std::string_view>& parts) {
  constexpr ScanVerdict kUnsure = ScanVerdict::kUnsure;
  struct Level {
    uint32_t node;     // the container's node in the trie
    uint32_t element;  // in an array: the index of the current element
    uint64_t matched;  // in an object: the trie children whose member came already
    bool array;
  };
  Level stack[kMaxScanDepth];
  int depth = 0;
  size_t found = 0;
  const auto limit = static_cast<uint32_t>(line_end - text_);
  const uint32_t* s = next_;
  auto in_line = [&] { return *s < limit; };  // (*end_ is past every line)
  auto peek = [&] { return in_line() ? text_[*s] : '\0'; };
  // In a line with escapes: whether the string at *s holds one (it ends before the next
  // structural).
  auto escaped_string = [&] {
    return escapes && std::memchr(text_ + *s, '\\', s[1] - *s) != nullptr;
  };

  // The trie node of the member whose name is the string at *s (unescaped), in the object on
  // top.
  auto member_node = [&](Level& level) {
    // Once each child has come, a later member is a duplicate or not on a -k path.
    if (level.node == KeyTrie::kNoNode || level.matched == every_child_[level.node]) {
      return KeyTrie::kNoNode;
    }
    const char* name = text_ + *s + 1;
    // The next structural should be the ':' after the name. When a quote comes just before it,
    // that quote closes the name (a string holds no other, and only whitespace may come
    // between a string and the next structural); otherwise the name's size is not known here.
    const char* after = text_ + s[1];
    const size_t size = after[-1] == '"' ? static_cast<size_t>(after - 1 - name) : SIZE_MAX;
    const auto room = static_cast<size_t>(line_end - name);
    const auto& children = trie_.nodes[level.node].children;
    for (size_t i = 0; i < children.size(); ++i) {
      const std::string& want = children[i].name;
      if (size != SIZE_MAX ? size != want.size()
                           : room <= want.size() || name[want.size()] != '"') {
        continue;
      }
      // `want` holds no quote or backslash, so if the name starts with it and a quote follows,
      // that quote ends the name.
      if (std::memcmp(name, want.data(), want.size()) != 0) continue;
      if (level.matched & (uint64_t{1} << i)) return KeyTrie::kNoNode;  // the first member counts
      level.matched |= uint64_t{1} << i;
      return children[i].node;
    }
    return KeyTrie::kNoNode;
  };
  auto element_node = [&](const Level& level) {
    if (level.node == KeyTrie::kNoNode) return KeyTrie::kNoNode;
    for (const KeyTrie::Child& child : trie_.nodes[level.node].children) {
      if (child.array_index == level.element) return child.node;
    }
    return KeyTrie::kNoNode;
  };

  // A key part's value: its bytes, for each part the node stands for.
  auto record = [&](uint32_t node, const char* begin, const char* end) {
    for (const uint32_t part : trie_.nodes[node].parts) {
      parts[part] = std::string_view(begin, static_cast<size_t>(end - begin));
      ++found;
    }
  };

  uint32_t node = 0;  // the trie node of the value that comes next
  char c = peek();
  bool key_part = false;
  if (c != '{') return kUnsure;

open:  // at '{' or '[' (c)
  if (depth == kMaxScanDepth) return kUnsure;
  stack[depth++] = Level{node, 0, 0, c == '['};
  ++s;
  c = peek();
  if (c == (stack[depth - 1].array ? ']' : '}')) {
    ++s;
    goto container_end;
  }
  if (!stack[depth - 1].array) goto member;
  node = element_node(stack[depth - 1]);
  goto value;

member:  // at a member's name (c)
  if (c != '"') return kUnsure;
  // (An escaped name might be a -k name written another way.)
  if (stack[depth - 1].node != KeyTrie::kNoNode && escaped_string()) return ScanVerdict::kEscapes;
  node = member_node(stack[depth - 1]);
  ++s;
  if (peek() != ':') return kUnsure;
  ++s;
  c = peek();

value:  // at a value (c), whose trie node is `node`
  key_part = node != KeyTrie::kNoNode && !trie_.nodes[node].parts.empty();
  switch (c) {
    case '{':
    case '[':
      if (key_part) return kUnsure;
      goto open;
    case '"':
      if (key_part) {
        if (escaped_string()) return ScanVerdict::kEscapes;  // a key to unescape
        const char* text = text_ + *s + 1;
        const auto* close = static_cast<const char*>(
            std::memchr(text, '"', static_cast<size_t>(line_end - text)));
        if (close == nullptr) return kUnsure;
        record(node, text, close);
        if (stop_at_key && found == trie_.parts) return ScanVerdict::kConfirmed;
      }
      break;
    case '\0': return kUnsure;
    default: {
      // A number or literal: a key part's bytes are its text as it stands.
      const char* begin = text_ + *s;
      const char* end = scalar_end(begin, line_end);
      if (end == nullptr) return kUnsure;
      if (key_part) {
        record(node, begin, end);
        if (stop_at_key && found == trie_.parts) return ScanVerdict::kConfirmed;
      }
    }
  }
  ++s;

after_value:  // inside the container on top
  c = peek();
  if (c == ',') {
    ++s;
    Level& level = stack[depth - 1];
    c = peek();
    if (!level.array) goto member;
    ++level.element;
    node = element_node(level);
    goto value;
  }
  if (c != (stack[depth - 1].array ? ']' : '}')) return kUnsure;
  ++s;

container_end:  // just after a container's last byte
  if (--depth > 0) goto after_value;
  if (in_line()) return kUnsure;  // nothing may follow the line's object
  next_ = s;
  // (A part is found once at most: the first member of a name counts, an index is one element.)
  return found == trie_.parts ? ScanVerdict::kConfirmed : ScanVerdict::kMissing;
}

}  // namespace keyshard
