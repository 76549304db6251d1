// Delimited and line keys are cut from the text as it stands (no quoting rules); a trailing
// '\r' of CRLF input is not part of the key, so CRLF and LF files partition alike.
#include "keys/key_extractor.h"

#include <algorithm>
#include <cstring>

#include "keys/json_key_extractor.h"

namespace keyshard {

std::string_view bad_reason_name(BadReason reason) {
  switch (reason) {
    case BadReason::kEmptyLine: return "empty_line";
    case BadReason::kInvalidJson: return "invalid_json";
    case BadReason::kNotObject: return "not_object";
    case BadReason::kMissingKey: return "missing_key";
  }
  return "unknown";
}

namespace {

std::string_view without_cr(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

}  // namespace

KeyExtractor::KeyExtractor(const KeySpec& spec) : spec_(spec) {
  if (spec_.format == InputFormat::kJson) {
    json_ = std::make_unique<JsonKeyExtractor>(spec_.paths, spec_.validate, spec_.tree_line_limit,
                                               spec_.block_window);
  }
  for (uint32_t field : spec_.fields) field_names_.push_back("field " + std::to_string(field));
}

KeyExtractor::~KeyExtractor() = default;
KeyExtractor::KeyExtractor(KeyExtractor&&) noexcept = default;
KeyExtractor& KeyExtractor::operator=(KeyExtractor&&) noexcept = default;

size_t KeyExtractor::lines_from_blocks() const { return json_ ? json_->lines_from_blocks() : 0; }
size_t KeyExtractor::lines_from_scans() const { return json_ ? json_->lines_from_scans() : 0; }

Extraction KeyExtractor::extract(std::string_view line, size_t readable, bool starts_input) {
  // (A spreadsheet's CSV export often starts with one: its first row's key would differ.)
  constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  if (starts_input && spec_.format != InputFormat::kJson && line.starts_with(kByteOrderMark)) {
    line.remove_prefix(kByteOrderMark.size());
  }
  switch (spec_.format) {
    case InputFormat::kJson: return json_->extract(line, readable);
    case InputFormat::kDelimited: return extract_delimited(without_cr(line));
    case InputFormat::kLine: return key_found(without_cr(line));
  }
  return bad_line(BadReason::kInvalidJson);
}

void KeyExtractor::begin_block(const char* text, size_t size) {
  if (json_) json_->begin_block(text, size);
}

Extraction KeyExtractor::extract_in_block(std::string_view line, size_t readable,
                                          bool starts_input) {
  return json_ ? json_->extract_in_block(line, readable) : extract(line, readable, starts_input);
}

Extraction KeyExtractor::extract_delimited(std::string_view line) {
  const uint32_t wanted = *std::max_element(spec_.fields.begin(), spec_.fields.end());
  fields_.clear();
  const char* cursor = line.data();
  const char* const end = line.data() + line.size();
  while (fields_.size() < wanted) {
    const void* found = std::memchr(cursor, spec_.delimiter, static_cast<size_t>(end - cursor));
    const char* stop = found ? static_cast<const char*>(found) : end;
    fields_.emplace_back(cursor, static_cast<size_t>(stop - cursor));
    if (!found) break;
    cursor = stop + 1;
  }
  for (size_t i = 0; i < spec_.fields.size(); ++i) {
    if (spec_.fields[i] > fields_.size()) return bad_line(BadReason::kMissingKey, field_names_[i]);
  }
  if (spec_.fields.size() == 1) return key_found(fields_[spec_.fields[0] - 1]);
  return key_found(join_key_parts(
      spec_.fields, [this](uint32_t field) { return fields_[field - 1]; }, composite_));
}

}  // namespace keyshard
