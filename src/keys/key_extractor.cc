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
  for (uint32_t i = 0; i < spec_.fields.size(); ++i) by_field_.push_back(i);
  std::stable_sort(by_field_.begin(), by_field_.end(),
                   [this](uint32_t a, uint32_t b) { return spec_.fields[a] < spec_.fields[b]; });
  fields_.resize(spec_.fields.size());
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
  // Walks the fields up to the last one asked for, keeping those asked for as it passes them.
  const char* cursor = line.data();
  const char* const end = line.data() + line.size();
  uint32_t field = 1;  // the number of the field at `cursor`
  for (size_t next = 0; next < by_field_.size();) {
    const void* found = std::memchr(cursor, spec_.delimiter, static_cast<size_t>(end - cursor));
    const char* stop = found ? static_cast<const char*>(found) : end;
    while (next < by_field_.size() && spec_.fields[by_field_[next]] == field) {
      fields_[by_field_[next++]] = std::string_view(cursor, static_cast<size_t>(stop - cursor));
    }
    if (next < by_field_.size() && !found) {  // the line ends before a field asked for
      for (size_t i = 0; i < spec_.fields.size(); ++i) {  // (the first one in -k's order)
        if (spec_.fields[i] > field) return bad_line(BadReason::kMissingKey, field_names_[i]);
      }
      return bad_line(BadReason::kMissingKey, field_names_[by_field_[next]]);  // (not reached)
    }
    cursor = stop + 1;
    ++field;
  }
  if (fields_.size() == 1) return key_found(fields_[0]);
  size_t part = 0;
  return key_found(join_key_parts(
      spec_.fields, [this, &part](uint32_t) { return fields_[part++]; }, composite_));
}

}  // namespace keyshard
