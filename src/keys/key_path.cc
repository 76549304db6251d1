#include "keys/key_path.h"

#include <charconv>

namespace keyshard {
namespace {

std::optional<uint64_t> canonical_index(std::string_view name) {
  if (name.empty() || name.size() > 18) return std::nullopt;
  if (name.size() > 1 && name[0] == '0') return std::nullopt;
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), value);
  if (error != std::errc() || end != name.data() + name.size()) return std::nullopt;
  return value;
}

void add_component(KeyPath& path, std::string name) {
  auto index = canonical_index(name);
  path.components.push_back(PathComponent{std::move(name), index});
}

Status parse_json_pointer(std::string_view spec, KeyPath& path) {
  // RFC 6901: "/" separates tokens; "~1" is "/" and "~0" is "~".
  std::string token;
  for (size_t i = 1; i <= spec.size(); ++i) {
    if (i == spec.size() || spec[i] == '/') {
      add_component(path, std::move(token));
      token.clear();
      continue;
    }
    if (spec[i] == '~') {
      if (i + 1 < spec.size() && (spec[i + 1] == '0' || spec[i + 1] == '1')) {
        token.push_back(spec[i + 1] == '0' ? '~' : '/');
        ++i;
        continue;
      }
      return Status::error("invalid key \"" + std::string(spec) +
                               "\": in a JSON Pointer '~' must be followed by 0 or 1",
                           {}, kExitUsage);
    }
    token.push_back(spec[i]);
  }
  return {};
}

Status parse_dotted(std::string_view spec, KeyPath& path) {
  std::string token;
  auto finish = [&](size_t at) -> Status {
    if (token.empty()) {
      return Status::error("invalid key \"" + std::string(spec) + "\": empty path component at " +
                               "character " + std::to_string(at + 1) +
                               " (write a literal dot as \\.)",
                           {}, kExitUsage);
    }
    add_component(path, std::move(token));
    token.clear();
    return {};
  };
  for (size_t i = 0; i < spec.size(); ++i) {
    const char c = spec[i];
    if (c == '\\' && i + 1 < spec.size() && (spec[i + 1] == '.' || spec[i + 1] == '\\')) {
      token.push_back(spec[++i]);
    } else if (c == '.') {
      if (Status status = finish(i); !status) return status;
    } else {
      token.push_back(c);
    }
  }
  return finish(spec.size());
}

}  // namespace

Status parse_key_path(std::string_view spec, KeyPath& path) {
  path = KeyPath{std::string(spec), {}};
  if (spec.empty()) {
    return Status::error("invalid key \"\": name a field, e.g. -k user_id or -k /account/id", {},
                         kExitUsage);
  }
  return spec[0] == '/' ? parse_json_pointer(spec, path) : parse_dotted(spec, path);
}

Status parse_field_number(std::string_view spec, uint32_t& field) {
  const auto [end, error] = std::from_chars(spec.data(), spec.data() + spec.size(), field);
  if (error != std::errc() || end != spec.data() + spec.size() || field == 0) {
    return Status::error("invalid key \"" + std::string(spec) +
                             "\": with --format delimited, -k is a field number counted from 1",
                         {}, kExitUsage);
  }
  return {};
}

std::string json_pointer_of(const KeyPath& path) {
  std::string pointer;
  for (const PathComponent& component : path.components) {
    pointer += '/';
    for (const char c : component.name) {
      if (c == '~') {
        pointer += "~0";
      } else if (c == '/') {
        pointer += "~1";
      } else {
        pointer += c;
      }
    }
  }
  return pointer;
}

}  // namespace keyshard
