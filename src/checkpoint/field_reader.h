// Reading a checkpoint's JSON members with every type checked. The first problem is remembered
// (and becomes the "damaged checkpoint" refusal); every getter returns a harmless value after one,
// so a decoder reads member after member and checks ok() where a value must be right to go on.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "util/status.h"

namespace keyshard {

class FieldReader {
 public:
  explicit FieldReader(std::string name) : name_(std::move(name)) {}

  bool ok() const { return problem_.empty(); }
  Status status() const {
    return Status::error("damaged checkpoint (" + problem_ + "); start over with --force", name_);
  }
  void fail(std::string problem) {
    if (problem_.empty()) problem_ = std::move(problem);
  }

  simdjson::dom::element member(simdjson::dom::object object, std::string_view key);
  bool has(simdjson::dom::object object, std::string_view key);
  simdjson::dom::object object(simdjson::dom::element value, std::string_view what);
  simdjson::dom::array array(simdjson::dom::element value, std::string_view what);
  // Each getter looks at a member only once it is known to exist: a default element has no
  // document behind it, and simdjson does not check that in a release build.
  uint64_t number(simdjson::dom::object object, std::string_view key);
  uint64_t number(simdjson::dom::element value, std::string_view what);
  bool boolean(simdjson::dom::object object, std::string_view key);
  std::string_view text(simdjson::dom::object object, std::string_view key);
  uint64_t hex(simdjson::dom::object object, std::string_view key);
  /// A byte string written by append_json_bytes_member: "key" or "key_base64".
  std::string bytes(simdjson::dom::object object, std::string_view key);
  std::vector<uint64_t> numbers(simdjson::dom::object object, std::string_view key);
  OutputState output(simdjson::dom::element value);

 private:
  std::string name_;
  std::string problem_;
};



}  // namespace keyshard
