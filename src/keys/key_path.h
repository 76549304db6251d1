// Key paths: what `-k` names. A dotted path (`account.id`, `tags.0`, `a\.b` for a literal dot)
// or a JSON Pointer (`/account/id`) becomes a list of components; a component that is a
// non-negative integer also selects that element when the value there is an array.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace keyshard {

struct PathComponent {
  std::string name;                    // the object member name, unescaped
  std::optional<uint64_t> array_index;  // set when `name` is a canonical non-negative integer
};

struct KeyPath {
  std::string spelling;  // as the user wrote it, for messages
  std::vector<PathComponent> components;
};

/// Parses one `-k` value for --format json. An empty JSON Pointer ("") is refused: the key
/// must name a member of the event object.
Status parse_key_path(std::string_view spec, KeyPath& path);

/// The path as a JSON Pointer (RFC 6901), one spelling for every way of writing it.
std::string json_pointer_of(const KeyPath& path);

/// Parses one `-k` value for --format delimited: a 1-based field number.
Status parse_field_number(std::string_view spec, uint32_t& field);

}  // namespace keyshard
