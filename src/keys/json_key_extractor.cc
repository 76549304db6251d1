#include "keys/json_key_extractor.h"

#include <algorithm>
#include <cstring>
#include <new>

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
                                   size_t tree_line_limit, size_t block_window)
    : walker_(paths), trie_(paths), scan_(trie_), unescaped_(paths.size()),
      paths_(paths.begin(), paths.end()),
      parts_(paths.size()), validate_(validate), tree_line_limit_(tree_line_limit),
      block_window_(std::max<size_t>(1, block_window)),
      // simdjson's portable kernel lets a string run on past a '\n' that follows a backslash,
      // so in a window a line could be read as the end of the string its predecessor left
      // open: with that kernel, every line is read on its own.
      windows_(simdjson::get_active_implementation()->name() != "fallback") {
#ifdef SIMDJSON_THREADS_ENABLED
  parser_.threaded = false;  // a window is one batch: there is no next one to read ahead
#endif
}

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
  return key_from_parts();
}

Extraction JsonKeyExtractor::key_from_parts() {
  if (parts_.size() == 1) return key_found(parts_[0]);
  return key_found(join_key_parts(parts_, [](std::string_view part) { return part; }, composite_));
}

Extraction JsonKeyExtractor::extract(std::string_view line, size_t readable) {
  if (line.size() > tree_line_limit_) {
    if (is_blank_line(line)) return bad_line(BadReason::kEmptyLine);
    return extract_by_grammar(line);
  }
  if (!validate_) {
    // On Demand may read into the padding after a line it cannot make sense of, so what
    // follows the line in the chunk (the next line) could change the verdict. It reads a copy
    // of the line, padded with zeros, instead: a line's result depends on that line alone.
    padded_line_.assign(line);
    padded_line_.append(kLinePadding, '\0');
    Extraction extraction =
        walker_.extract(std::string_view(padded_line_).substr(0, line.size()),
                        padded_line_.size());
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
  if (error == simdjson::MEMALLOC) memory_ran_out();
  if (error == simdjson::NUMBER_ERROR) {
    // Valid JSON may hold numbers beyond what simdjson's tree stores: check the grammar alone,
    // finding the key in the same pass.
    return extract_by_grammar(line);
  }
  if (error) {  // (simdjson's message is generic: "improper structure")
    return bad_line(BadReason::kInvalidJson, fault_of(line, simdjson::error_message(error)));
  }
  return from_tree(root, line, readable);
}

Extraction JsonKeyExtractor::from_tree(dom::element root, std::string_view line,
                                       size_t readable) {
  if (!root.is_object()) return bad_line(BadReason::kNotObject, "the line is not a JSON object");
  for (size_t part = 0; part < paths_.size(); ++part) {
    switch (look_up(root, paths_[part], parts_[part])) {
      case Lookup::kString: break;
      case Lookup::kMissing: return bad_line(BadReason::kMissingKey, paths_[part].spelling);
      case Lookup::kOther: return walker_.extract(line, readable);  // needs the raw text
    }
  }
  return key_from_parts();
}

void JsonKeyExtractor::begin_block(const char* text, size_t size) {
  block_active_ = false;
  block_end_ = text + size;
  window_end_ = text;  // the first line starts a window
}

void JsonKeyExtractor::start_window(const char* begin) {
  block_active_ = false;
  scan_active_ = false;
  auto size = static_cast<size_t>(block_end_ - begin);
  if (size > block_window_) {
    // Up to the end of the line that reaches the window's size.
    const auto* newline = static_cast<const char*>(
        std::memchr(begin + block_window_ - 1, '\n', size - block_window_ + 1));
    if (newline != nullptr) size = static_cast<size_t>(newline + 1 - begin);
  }
  window_text_ = begin;
  window_end_ = begin + size;
  if (size == 0 || size > kBlockLimit || !windows_) return;
  escaped_lines_ = 0;
  scan_active_ = scan_.index(begin, size);
  if (!scan_active_ && validate_) parse_window(begin);
}

void JsonKeyExtractor::memory_ran_out() {
  // No verdict on the line: memory ran out, not the line. A parser whose allocation failed part
  // way is not to be used again (simdjson 3.0.1 keeps a capacity whose stage 2 stacks are
  // missing, and a later line's parse would write through them).
  block_active_ = false;
  stream_ = dom::document_stream{};
  parser_ = simdjson::dom::parser();
  parser_.threaded = false;
  throw std::bad_alloc();
}

void JsonKeyExtractor::parse_window(const char* begin) {
  block_active_ = false;
  window_text_ = begin;
  const auto size = static_cast<size_t>(window_end_ - begin);
  // One batch for the whole window: simdjson then runs stage 1 once, on this thread. It parses
  // a copy padded with zeros: simdjson 3.0.1's stream may read the byte after the last one it
  // is given (the next line, in the chunk), which once made `{"k":"v","k"""]}` followed by a
  // line starting with ':' an object.
  padded_window_.assign(begin, size);
  padded_window_.append(simdjson::SIMDJSON_PADDING, '\0');
  stream_ = dom::document_stream{};
  if (parser_.parse_many(padded_window_.data(), size, size).get(stream_) != simdjson::SUCCESS) {
    return;
  }
  document_ = stream_.begin();
  document_used_ = false;
  block_active_ = true;
}

Extraction JsonKeyExtractor::extract_in_block(std::string_view line, size_t readable) {
  // (A line outside the block, against the contract, is read on its own.)
  if (line.data() >= window_end_ && line.data() < block_end_) start_window(line.data());
  if (!validate_) {
    // The scan stops at the key, as the walker does; any line it does not confirm is read on
    // its own.
    if (scan_active_ && line.data() >= window_text_ && line.data() < window_end_ &&
        line.size() <= tree_line_limit_ &&
        scan_.confirm(line, parts_, true) == ScanVerdict::kConfirmed) {
      ++lines_from_blocks_;
      ++lines_from_scans_;
      return key_from_parts();
    }
    return extract(line, readable);
  }
  if (scan_active_ && line.data() >= window_text_ && line.data() < window_end_) {
    const ScanVerdict verdict =
        line.size() <= tree_line_limit_ ? scan_.confirm(line, parts_) : ScanVerdict::kUnsure;
    if (verdict == ScanVerdict::kConfirmed || verdict == ScanVerdict::kMissing) {
      ++lines_from_blocks_;
      ++lines_from_scans_;
      if (verdict == ScanVerdict::kConfirmed) return key_from_parts();
      // The first missing part is named, as from_tree() names it.
      size_t missing = 0;
      while (missing + 1 < parts_.size() && parts_[missing].data() != nullptr) ++missing;
      return bad_line(BadReason::kMissingKey, paths_[missing].spelling);
    }
    if (verdict == ScanVerdict::kEscapes && ++escaped_lines_ <= kEscapedLinesAlone) {
      return extract(line, readable);
    }
    if (verdict == ScanVerdict::kUnsure && is_blank_line(line)) {
      return bad_line(BadReason::kEmptyLine);  // (no need of the parser for the next lines)
    }
    scan_active_ = false;
    parse_window(line.data());
  }
  if (block_active_) {
    if (std::optional<Extraction> extraction = from_block(line, readable)) {
      ++lines_from_blocks_;
      return *extraction;
    }
    block_active_ = false;  // the rest of the window is parsed line by line
  }
  return extract(line, readable);
}

std::optional<Extraction> JsonKeyExtractor::from_block(std::string_view line, size_t readable) {
  if (line.size() > tree_line_limit_) return std::nullopt;
  if (document_used_) {
    ++document_;
    document_used_ = false;
  }
  if (!(document_ != stream_.end())) return std::nullopt;
  simdjson::simdjson_result<dom::element> document = *document_;
  if (document.error() == simdjson::MEMALLOC) memory_ran_out();
  if (document.error()) return std::nullopt;
  const size_t line_begin = static_cast<size_t>(line.data() - window_text_);
  const size_t line_end = line_begin + line.size();
  const size_t start = document_.current_index();
  if (start < line_begin) return std::nullopt;
  // Stage 1 marks any byte outside a string that is not JSON whitespace, so a line in which no
  // document starts holds whitespace alone.
  if (start >= line_end) return bad_line(BadReason::kEmptyLine);
  // source() is exact for an object or an array only.
  if (window_text_[start] != '{' && window_text_[start] != '[') return std::nullopt;
  const size_t end = start + document_.source().size();
  if (end > line_end) return std::nullopt;
  for (size_t at = end; at < line_end; ++at) {
    const char c = window_text_[at];
    if (c != ' ' && c != '\t' && c != '\r') return std::nullopt;  // a second value, or junk
  }
  document_used_ = true;  // the tree stays valid until the next document is parsed
  return from_tree(document.value_unsafe(), line, readable);
}

}  // namespace keyshard
