#include "keys/json_key_extractor.h"

namespace keyshard {
namespace {

namespace dom = simdjson::dom;

enum class Lookup { kString, kOther, kMissing };

// Follows `path` from `root`. The first of duplicate members wins (dom::object::at_key scans
// the members in order and stops at the first match).
Lookup look_up(dom::element root, const KeyPath& path, std::string_view& text) {
  dom::element at = root;
  for (const PathComponent& component : path.components) {
    dom::object object;
    dom::array array;
    if (at.get(object) == simdjson::SUCCESS) {
      if (object.at_key(component.name).get(at) != simdjson::SUCCESS) return Lookup::kMissing;
    } else if (component.array_index && at.get(array) == simdjson::SUCCESS) {
      if (array.at(*component.array_index).get(at) != simdjson::SUCCESS) return Lookup::kMissing;
    } else {
      return Lookup::kMissing;
    }
  }
  return at.get(text) == simdjson::SUCCESS ? Lookup::kString : Lookup::kOther;
}

// The detail of an invalid line: the fault the grammar check names, else `otherwise`.
std::string_view fault_of(std::string_view line, std::string_view otherwise) {
  const JsonGrammarVerdict verdict = check_json_grammar(line);
  return verdict.shape == JsonShape::kInvalid ? verdict.problem : otherwise;
}

}  // namespace

JsonKeyExtractor::JsonKeyExtractor(std::span<const KeyPath> paths, bool validate,
                                   size_t tree_line_limit)
    : walker_(paths), trie_(paths), unescaped_(paths.size()), paths_(paths.begin(), paths.end()),
      parts_(paths.size()), validate_(validate), tree_line_limit_(tree_line_limit) {}

Extraction JsonKeyExtractor::extract_by_grammar(std::string_view line) {
  const JsonGrammarVerdict verdict = check_json_grammar(line, &trie_, &values_);
  if (verdict.shape == JsonShape::kInvalid) {
    return bad_line(BadReason::kInvalidJson, verdict.problem);
  }
  if (verdict.shape == JsonShape::kOtherValue) {
    return bad_line(BadReason::kNotObject, "the line is not a JSON object");
  }
  for (size_t part = 0; part < paths_.size(); ++part) {
    if (!values_[part]) return bad_line(BadReason::kMissingKey, paths_[part].spelling);
    const std::string_view text = *values_[part];
    if (text.front() != '"') {
      parts_[part] = text;  // the raw text of any other value
    } else if (text.find('\\') == std::string_view::npos) {
      parts_[part] = text.substr(1, text.size() - 2);
    } else {
      unescape_json_string(text, unescaped_[part]);
      parts_[part] = unescaped_[part];
    }
  }
  if (parts_.size() == 1) return key_found(parts_[0]);
  return key_found(join_key_parts(parts_, [](std::string_view part) { return part; }, composite_));
}

Extraction JsonKeyExtractor::extract(std::string_view line, size_t readable) {
  if (line.size() > tree_line_limit_) {
    if (is_blank_line(line)) return bad_line(BadReason::kEmptyLine);
    return extract_by_grammar(line);
  }
  if (!validate_) {
    Extraction extraction = walker_.extract(line, readable);
    if (!extraction.ok && extraction.reason == BadReason::kInvalidJson) {
      // On Demand says where it stopped ("ended early in the middle of an object" for a
      // line with junk after its object).
      extraction.detail = fault_of(line, extraction.detail);
    }
    return extraction;
  }
  if (is_blank_line(line)) return bad_line(BadReason::kEmptyLine);

  dom::element root;
  const simdjson::error_code error = parser_.parse(line.data(), line.size(), false).get(root);
  if (error == simdjson::NUMBER_ERROR) {
    // Valid JSON may hold numbers beyond what simdjson's tree stores: check the grammar alone,
    // finding the key in the same pass.
    return extract_by_grammar(line);
  }
  if (error) {  // (simdjson's message is generic: "improper structure")
    return bad_line(BadReason::kInvalidJson, fault_of(line, simdjson::error_message(error)));
  }
  if (!root.is_object()) return bad_line(BadReason::kNotObject, "the line is not a JSON object");

  for (size_t part = 0; part < paths_.size(); ++part) {
    switch (look_up(root, paths_[part], parts_[part])) {
      case Lookup::kString: break;
      case Lookup::kMissing: return bad_line(BadReason::kMissingKey, paths_[part].spelling);
      case Lookup::kOther: return walker_.extract(line, readable);  // needs the raw text
    }
  }
  if (parts_.size() == 1) return key_found(parts_[0]);
  return key_found(join_key_parts(parts_, [](std::string_view part) { return part; }, composite_));
}

}  // namespace keyshard
