// Validation rides on the walk: member names and strings with escapes are unescaped (which
// checks the escapes), numbers and literals are checked against the JSON grammar from their raw
// token, and after the root object only whitespace may follow. simdjson's stage 1 has already
// checked UTF-8 and control characters for the whole line. The first of duplicate members wins.
#include "keys/json_path_walker.h"

#include <cassert>
#include <optional>

namespace keyshard {

namespace ondemand = simdjson::ondemand;
using simdjson::error_code;

namespace {

constexpr const char* kBadNumber = "invalid number";
constexpr const char* kBadLiteral = "invalid literal";
constexpr const char* kTrailing = "content after the JSON object";

std::string_view trim_right(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n' ||
                           text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// RFC 8259 number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool is_json_number(std::string_view text) {
  size_t i = 0;
  const size_t n = text.size();
  if (i < n && text[i] == '-') ++i;
  if (i >= n) return false;
  if (text[i] == '0') {
    ++i;
  } else if (is_digit(text[i])) {
    while (i < n && is_digit(text[i])) ++i;
  } else {
    return false;
  }
  if (i < n && text[i] == '.') {
    ++i;
    if (i >= n || !is_digit(text[i])) return false;
    while (i < n && is_digit(text[i])) ++i;
  }
  if (i < n && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < n && (text[i] == '+' || text[i] == '-')) ++i;
    if (i >= n || !is_digit(text[i])) return false;
    while (i < n && is_digit(text[i])) ++i;
  }
  return i == n;
}

// True when nothing but whitespace follows what has been consumed of `document`.
bool at_document_end(ondemand::document& document) {
  const char* next = nullptr;
  return document.current_location().get(next) == simdjson::OUT_OF_BOUNDS;
}

// Stage 1 has already checked a string's UTF-8 and control characters, so only a string with a
// backslash needs unescaping to be validated. `body` points just after the opening quote.
// Returns the string's raw bytes when it has no backslash, or nullopt when it has one.
std::optional<std::string_view> plain_string(const char* body) {
  const char* end = body;
  while (*end != '"' && *end != '\\') ++end;  // the closing quote exists: stage 1 checked
  if (*end == '\\') return std::nullopt;
  return std::string_view(body, static_cast<size_t>(end - body));
}

bool is_blank(std::string_view line) {
  for (char c : line) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return false;
  }
  return true;
}

}  // namespace

JsonPathWalker::JsonPathWalker(std::span<const KeyPath> paths) {
  nodes_.emplace_back();
  for (size_t part = 0; part < paths.size(); ++part) {
    uint32_t node = 0;
    for (const PathComponent& component : paths[part].components) {
      uint32_t next = kNoNode;
      for (const Child& child : nodes_[node].children) {
        if (child.name == component.name) next = child.node;
      }
      if (next == kNoNode) {
        next = static_cast<uint32_t>(nodes_.size());
        nodes_[node].children.push_back(Child{component.name, component.array_index, next});
        nodes_.emplace_back();
      }
      node = next;
    }
    nodes_[node].parts.push_back(static_cast<int>(part));
    spellings_.push_back(paths[part].spelling);
  }
  parts_.resize(paths.size());
  found_.resize(paths.size());
  assert(paths.size() <= 64);
}

bool JsonPathWalker::wants(uint32_t node) const {
  if (node == kNoNode) return false;
  for (int part : nodes_[node].parts) {
    if (!found_[part]) return true;
  }
  return false;
}

void JsonPathWalker::record(uint32_t node, std::string_view bytes) {
  for (int part : nodes_[node].parts) {
    if (found_[part]) continue;
    parts_[part] = bytes;
    found_[part] = true;
    ++found_count_;
  }
}

error_code JsonPathWalker::check_scalar(std::string_view token, ondemand::json_type type) {
  const bool good = type == ondemand::json_type::number ? is_json_number(token)
                    : type == ondemand::json_type::null ? token == "null"
                                                        : (token == "true" || token == "false");
  if (good) return simdjson::SUCCESS;
  scalar_problem_ = type == ondemand::json_type::number ? kBadNumber : kBadLiteral;
  return simdjson::TAPE_ERROR;
}

error_code JsonPathWalker::record_container(ondemand::value value, uint32_t node,
                                              ondemand::json_type type) {
  // Keep the raw text of an object or array key part while still walking (and validating) it:
  // it starts at its first token and ends just before the token that follows it.
  const char* start = value.raw_json_token().data();
  error_code error;
  if (type == ondemand::json_type::object) {
    ondemand::object object;
    if ((error = value.get_object().get(object))) return error;
    if ((error = walk_object(object, node))) return error;
  } else {
    ondemand::array array;
    if ((error = value.get_array().get(array))) return error;
    if ((error = walk_array(array, node))) return error;
  }
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
    case ondemand::json_type::object:
    case ondemand::json_type::array:
      if (wanted) return record_container(value, node, type);
      if (node == kNoNode && !validate_) return simdjson::SUCCESS;  // skipped unread
      if (type == ondemand::json_type::object) {
        ondemand::object object;
        if (error_code error = value.get_object().get(object)) return error;
        return walk_object(object, node);
      } else {
        ondemand::array array;
        if (error_code error = value.get_array().get(array)) return error;
        return walk_array(array, node);
      }
    case ondemand::json_type::string: {
      if (!wanted && !validate_) return simdjson::SUCCESS;
      if (!wanted && plain_string(value.raw_json_token().data() + 1)) return simdjson::SUCCESS;
      std::string_view text;
      if (error_code error = value.get_string().get(text)) return error;
      if (wanted) record(node, text);
      return simdjson::SUCCESS;
    }
    case ondemand::json_type::number:
    case ondemand::json_type::boolean:
    case ondemand::json_type::null: {
      if (!wanted && !validate_) return simdjson::SUCCESS;
      const std::string_view token = trim_right(value.raw_json_token());
      if (validate_) {
        if (error_code error = check_scalar(token, type)) return error;
      }
      if (wanted) record(node, token);
      return simdjson::SUCCESS;
    }
  }
  return simdjson::INCORRECT_TYPE;
}

error_code JsonPathWalker::walk_object(ondemand::object object, uint32_t node) {
  const bool interested = node != kNoNode && !nodes_[node].children.empty();
  uint64_t matched = 0;  // children already matched in this object: the first occurrence wins
  for (auto member : object) {
    ondemand::field field;
    if (error_code error = std::move(member).get(field)) return error;
    uint32_t child_node = kNoNode;
    if (interested || validate_) {
      std::string_view name;
      if (auto plain = plain_string(field.key().raw())) {
        name = *plain;
      } else if (error_code error = field.unescaped_key().get(name)) {
        return error;
      }
      if (interested) {
        const auto& children = nodes_[node].children;
        for (size_t i = 0; i < children.size(); ++i) {
          if (!(matched & (1ull << i)) && children[i].name == name) {
            matched |= 1ull << i;
            child_node = children[i].node;
            break;
          }
        }
      }
    }
    if (child_node != kNoNode || validate_) {
      if (error_code error = visit(field.value(), child_node)) return error;
      if (!validate_ && found_count_ == parts_.size()) return simdjson::SUCCESS;
    }
  }
  return simdjson::SUCCESS;
}

error_code JsonPathWalker::walk_array(ondemand::array array, uint32_t node) {
  const bool interested = node != kNoNode && !nodes_[node].children.empty();
  uint64_t index = 0;
  for (auto element : array) {
    ondemand::value value;
    if (error_code error = std::move(element).get(value)) return error;
    uint32_t child_node = kNoNode;
    if (interested) {
      for (const Child& child : nodes_[node].children) {
        if (child.array_index == index) child_node = child.node;
      }
    }
    if (child_node != kNoNode || validate_) {
      if (error_code error = visit(value, child_node)) return error;
      if (!validate_ && found_count_ == parts_.size()) return simdjson::SUCCESS;
    }
    ++index;
  }
  return simdjson::SUCCESS;
}

Extraction JsonPathWalker::classify_non_object(ondemand::document& document,
                                                 ondemand::json_type type) {
  // A line that is valid JSON but not an object is "not_object"; anything else is invalid JSON.
  auto invalid = [this](error_code error) {
    return bad_line(BadReason::kInvalidJson,
                    scalar_problem_ ? scalar_problem_ : simdjson::error_message(error));
  };
  if (validate_) {
    error_code error = simdjson::SUCCESS;
    if (type == ondemand::json_type::array) {
      ondemand::array array;
      error = document.get_array().get(array);
      if (!error) error = walk_array(array, kNoNode);
    } else if (type == ondemand::json_type::string) {
      error = document.get_string().error();
    } else {
      std::string_view token;
      error = document.raw_json_token().get(token);
      if (!error) error = check_scalar(trim_right(token), type);
    }
    if (error) return invalid(error);
    if (!at_document_end(document)) return bad_line(BadReason::kInvalidJson, kTrailing);
  }
  return bad_line(BadReason::kNotObject, "the line is not a JSON object");
}

Extraction JsonPathWalker::extract(std::string_view line, size_t readable, bool validate) {
  if (is_blank(line)) return bad_line(BadReason::kEmptyLine);
  validate_ = validate;
  std::fill(found_.begin(), found_.end(), false);
  found_count_ = 0;
  scalar_problem_ = nullptr;

  auto invalid = [this](error_code error) {
    return bad_line(BadReason::kInvalidJson,
                    scalar_problem_ ? scalar_problem_ : simdjson::error_message(error));
  };

  ondemand::document document;
  if (error_code error = parser_.iterate(line.data(), line.size(), readable).get(document)) {
    return invalid(error);
  }
  ondemand::json_type type;
  if (error_code error = document.type().get(type)) return invalid(error);
  if (type != ondemand::json_type::object) return classify_non_object(document, type);
  ondemand::object root;
  if (error_code error = document.get_object().get(root)) return invalid(error);
  if (error_code error = walk_object(root, 0)) return invalid(error);
  if (validate_ && !at_document_end(document)) return bad_line(BadReason::kInvalidJson, kTrailing);

  for (size_t part = 0; part < parts_.size(); ++part) {
    if (!found_[part]) return bad_line(BadReason::kMissingKey, spellings_[part]);
  }
  if (parts_.size() == 1) return key_found(parts_[0]);
  composite_.clear();
  for (size_t part = 0; part < parts_.size(); ++part) {
    if (part > 0) composite_.push_back('\x1f');
    composite_.append(parts_[part]);
  }
  return key_found(composite_);
}

}  // namespace keyshard
