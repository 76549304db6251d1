// Reading a checkpoint's JSON members with every type checked (see field_reader.h).
#include "checkpoint/field_reader.h"

#include <fmt/format.h>

#include <charconv>

#include "util/json_text.h"

namespace keyshard {
namespace {

namespace dom = simdjson::dom;

}  // namespace

dom::element FieldReader::member(dom::object object, std::string_view key) {
  dom::element value;
  if (object.at_key(key).get(value) != simdjson::SUCCESS) fail(fmt::format("no \"{}\"", key));
  return value;
}

bool FieldReader::has(dom::object object, std::string_view key) {
  dom::element value;
  return object.at_key(key).get(value) == simdjson::SUCCESS;
}

dom::object FieldReader::object(dom::element value, std::string_view what) {
  dom::object result;
  if (ok() && value.get(result) != simdjson::SUCCESS) {
    fail(fmt::format("\"{}\" is not an object", what));
  }
  return result;
}

dom::array FieldReader::array(dom::element value, std::string_view what) {
  dom::array result;
  if (ok() && value.get(result) != simdjson::SUCCESS) {
    fail(fmt::format("\"{}\" is not an array", what));
  }
  return result;
}

uint64_t FieldReader::number(dom::object object, std::string_view key) {
  if (!ok()) return 0;
  const dom::element value = member(object, key);
  uint64_t result = 0;
  if (ok() && value.get(result) != simdjson::SUCCESS) {
    fail(fmt::format("\"{}\" is not a number", key));
  }
  return result;
}

uint64_t FieldReader::number(dom::element value, std::string_view what) {
  uint64_t result = 0;
  if (ok() && value.get(result) != simdjson::SUCCESS) {
    fail(fmt::format("\"{}\" is not a number", what));
  }
  return result;
}

bool FieldReader::boolean(dom::object object, std::string_view key) {
  if (!ok()) return false;
  const dom::element value = member(object, key);
  bool result = false;
  if (ok() && value.get(result) != simdjson::SUCCESS) {
    fail(fmt::format("\"{}\" is not true or false", key));
  }
  return result;
}

std::string_view FieldReader::text(dom::object object, std::string_view key) {
  if (!ok()) return {};
  const dom::element value = member(object, key);
  std::string_view result;
  if (ok() && value.get(result) != simdjson::SUCCESS) {
    fail(fmt::format("\"{}\" is not a string", key));
  }
  return result;
}

uint64_t FieldReader::hex(dom::object object, std::string_view key) {
  const std::string_view digits = text(object, key);
  uint64_t result = 0;
  if (!ok()) return 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), result, 16);
  if (error != std::errc() || end != digits.data() + digits.size() || digits.size() != 16) {
    fail(fmt::format("\"{}\" is not 16 hex digits", key));
  }
  return result;
}

std::string FieldReader::bytes(dom::object object, std::string_view key) {
  if (!ok()) return {};
  const std::string encoded = std::string(key) + "_base64";
  if (has(object, encoded)) {
    std::string result;
    if (!decode_base64(text(object, encoded), result)) fail(fmt::format("bad \"{}\"", encoded));
    return result;
  }
  return std::string(text(object, key));
}

std::vector<uint64_t> FieldReader::numbers(dom::object object, std::string_view key) {
  std::vector<uint64_t> result;
  if (!ok()) return result;
  const dom::array items = array(member(object, key), key);
  if (!ok()) return result;
  for (dom::element value : items) {
    result.push_back(number(value, key));
    if (!ok()) break;
  }
  return result;
}

OutputState FieldReader::output(dom::element value) {
  OutputState state;
  const dom::object object = this->object(value, "outputs");
  if (!ok()) return state;
  state.file = bytes(object, "file");
  state.size = number(object, "size");
  state.lines = number(object, "lines");
  state.chain = hex(object, "chain");
  state.digest = hex(object, "digest");
  return state;
}

}  // namespace keyshard
