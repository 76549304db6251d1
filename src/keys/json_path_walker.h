// Key extraction from one NDJSON line with simdjson On Demand, keeping each key part's raw text
// as it stands in the line. The -k paths form a small trie walked alongside the document, so a
// composite key costs one pass, and the walk stops as soon as every part is found. It does not
// validate what it skips: --no-validate uses it alone; otherwise the line is checked first.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "keys/extraction.h"
#include "keys/key_path.h"
#include "keys/key_trie.h"

namespace keyshard {

static_assert(kLinePadding == simdjson::SIMDJSON_PADDING);

class JsonPathWalker {
 public:
  /// `paths` are the -k paths, in order (several make a composite key).
  explicit JsonPathWalker(std::span<const KeyPath> paths);

  /// Extracts the key of `line`; `readable` is how many bytes from line.data() may be read
  /// (at least line.size() + kLinePadding). The key stays valid until the next call.
  Extraction extract(std::string_view line, size_t readable);

 private:
  static constexpr uint32_t kNoNode = KeyTrie::kNoNode;

  simdjson::error_code visit(simdjson::ondemand::value value, uint32_t node);
  simdjson::error_code walk_object(simdjson::ondemand::object object, uint32_t node);
  simdjson::error_code walk_array(simdjson::ondemand::array array, uint32_t node);
  simdjson::error_code record_container(simdjson::ondemand::value value, uint32_t node,
                                        simdjson::ondemand::json_type type);
  bool wants(uint32_t node) const;
  bool done() const { return found_count_ == parts_.size(); }
  void record(uint32_t node, std::string_view bytes);

  simdjson::ondemand::parser parser_;
  KeyTrie trie_;
  std::vector<std::string> spellings_;     // the -k spelling of each part, for messages
  std::vector<std::string_view> parts_;    // the bytes found for each part in this line
  std::vector<bool> found_;
  size_t found_count_ = 0;
  int walking_whole_ = 0;  // > 0 while a container key part is walked to its end
  std::string composite_;
};

}  // namespace keyshard
