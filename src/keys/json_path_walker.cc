// Member names and key strings without a backslash are taken straight from the line; only those
// with escapes are unescaped. The first of duplicate members wins: each trie child matches once
// per object.
#include "keys/json_path_walker.h"

#include <cassert>
#include <new>

#include "keys/json_grammar.h"

namespace keyshard {

namespace ondemand = simdjson::ondemand;
using simdjson::error_code;

namespace {

std::string_view trim_right(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n' ||
                           text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

// `body` points just after a string's opening quote (stage 1 guarantees a closing one).
// Returns the string's bytes when it has no backslash, nullopt when it must be unescaped.
std::optional<std::string_view> plain_string(const char* body) {
  const char* end = body;
  while (*end != '"' && *end != '\\') ++end;
  if (*end == '\\') return std::nullopt;
  return std::string_view(body, static_cast<size_t>(end - body));
}

}  // namespace

JsonPathWalker::JsonPathWalker(std::span<const KeyPath> paths) : trie_(paths) {
  for (const KeyPath& path : paths) spellings_.push_back(path.spelling);
  parts_.resize(paths.size());
  found_.resize(paths.size());
  assert(paths.size() <= 64);
}

bool JsonPathWalker::wants(uint32_t node) const {
  if (node == kNoNode) return false;
  for (const uint32_t part : trie_.nodes[node].parts) {
    if (!found_[part]) return true;
  }
  return false;
}

void JsonPathWalker::record(uint32_t node, std::string_view bytes) {
  for (const uint32_t part : trie_.nodes[node].parts) {
    if (found_[part]) continue;
    parts_[part] = bytes;
    found_[part] = true;
    ++found_count_;
  }
}

error_code JsonPathWalker::record_container(ondemand::value value, uint32_t node,
                                            ondemand::json_type type) {
  // Walk it whole (deeper -k paths may run through it; no early stop inside): its raw text then
  // runs from its first token to just before the token that follows it.
  const char* start = value.raw_json_token().data();
  ++walking_whole_;
  error_code error;
  if (type == ondemand::json_type::object) {
    ondemand::object object;
    error = value.get_object().get(object);
    if (!error) error = walk_object(object, node);
  } else {
    ondemand::array array;
    error = value.get_array().get(array);
    if (!error) error = walk_array(array, node);
  }
  --walking_whole_;
  if (error) return error;
  const char* end = nullptr;
  if ((error = value.current_location().get(end))) return error;
  record(node, trim_right(std::string_view(start, static_cast<size_t>(end - start))));
  return simdjson::SUCCESS;
}

error_code JsonPathWalker::visit(ondemand::value value, uint32_t node) {
  ondemand::json_type type;
  if (error_code error = value.type().get(type)) return error;
  const bool wanted = wants(node);
  switch (type) {
    case ondemand::json_type::object: {
      if (wanted) return record_container(value, node, type);
      ondemand::object object;
      if (error_code error = value.get_object().get(object)) return error;
      return walk_object(object, node);
    }
    case ondemand::json_type::array: {
      if (wanted) return record_container(value, node, type);
      ondemand::array array;
      if (error_code error = value.get_array().get(array)) return error;
      return walk_array(array, node);
    }
    case ondemand::json_type::string: {
      if (!wanted) return simdjson::SUCCESS;
      if (auto plain = plain_string(value.raw_json_token().data() + 1)) {
        record(node, *plain);
        return simdjson::SUCCESS;
      }
      std::string_view text;
      if (error_code error = value.get_string().get(text)) return error;
      record(node, text);
      return simdjson::SUCCESS;
    }
    case ondemand::json_type::number:
    case ondemand::json_type::boolean:
    case ondemand::json_type::null: {
      if (!wanted) return simdjson::SUCCESS;
      // On Demand types a value by its first byte: the key's token itself must be valid ("tru",
      // "-" or "01" is not), even when the rest of the line is not validated.
      const std::string_view token = trim_right(value.raw_json_token());
      if (check_json_grammar(token).shape != JsonShape::kOtherValue) {
        return type == ondemand::json_type::number ? simdjson::NUMBER_ERROR
                                                   : simdjson::T_ATOM_ERROR;
      }
      record(node, token);
      return simdjson::SUCCESS;
    }
  }
  return simdjson::INCORRECT_TYPE;
}

error_code JsonPathWalker::walk_object(ondemand::object object, uint32_t node) {
  static const std::vector<KeyTrie::Child> kNone;
  const auto& children = node == kNoNode ? kNone : trie_.nodes[node].children;
  if (children.empty() && walking_whole_ == 0) return simdjson::SUCCESS;  // skipped unread
  uint64_t matched = 0;  // children already matched in this object: the first occurrence wins
  for (auto member : object) {
    ondemand::field field;
    if (error_code error = std::move(member).get(field)) return error;
    if (children.empty()) continue;  // only consuming it
    std::string_view name;
    if (auto plain = plain_string(field.key().raw())) {
      name = *plain;
    } else if (error_code error = field.unescaped_key().get(name)) {
      return error;
    }
    for (size_t i = 0; i < children.size(); ++i) {
      if (!(matched & (1ull << i)) && children[i].name == name) {
        matched |= 1ull << i;
        if (error_code error = visit(field.value(), children[i].node)) return error;
        if (done() && walking_whole_ == 0) return simdjson::SUCCESS;
        break;
      }
    }
  }
  return simdjson::SUCCESS;
}

error_code JsonPathWalker::walk_array(ondemand::array array, uint32_t node) {
  static const std::vector<KeyTrie::Child> kNone;
  const auto& children = node == kNoNode ? kNone : trie_.nodes[node].children;
  if (children.empty() && walking_whole_ == 0) return simdjson::SUCCESS;  // skipped unread
  uint64_t index = 0;
  for (auto element : array) {
    ondemand::value value;
    if (error_code error = std::move(element).get(value)) return error;
    for (const KeyTrie::Child& child : children) {
      if (child.array_index == index) {
        if (error_code error = visit(value, child.node)) return error;
        if (done() && walking_whole_ == 0) return simdjson::SUCCESS;
        break;
      }
    }
    ++index;
  }
  return simdjson::SUCCESS;
}

Extraction JsonPathWalker::extract(std::string_view line, size_t readable) {
  if (is_blank_line(line)) return bad_line(BadReason::kEmptyLine);
  std::fill(found_.begin(), found_.end(), false);
  found_count_ = 0;
  auto invalid = [](error_code error) {
    return bad_line(BadReason::kInvalidJson, simdjson::error_message(error));
  };

  ondemand::document document;
  if (error_code error = parser_.iterate(line.data(), line.size(), readable).get(document)) {
    if (error == simdjson::MEMALLOC) {  // memory ran out, not the line (see JsonKeyExtractor)
      parser_ = ondemand::parser();
      throw std::bad_alloc();
    }
    return invalid(error);
  }
  ondemand::json_type type;
  if (error_code error = document.type().get(type)) return invalid(error);
  if (type != ondemand::json_type::object) {
    return bad_line(BadReason::kNotObject, "the line is not a JSON object");
  }
  ondemand::object root;
  if (error_code error = document.get_object().get(root)) return invalid(error);
  if (error_code error = walk_object(root, 0)) return invalid(error);

  for (size_t part = 0; part < parts_.size(); ++part) {
    if (!found_[part]) return bad_line(BadReason::kMissingKey, spellings_[part]);
  }
  if (parts_.size() == 1) return key_found(parts_[0]);
  return key_found(join_key_parts(parts_, [](std::string_view part) { return part; }, composite_));
}

}  // namespace keyshard
