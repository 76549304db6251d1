// The one key-extraction interface the routers call, whatever --format says: JSON paths,
// delimited fields, or the whole line. Each router owns one KeyExtractor (they are not shared).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "keys/extraction.h"
#include "keys/json_limits.h"
#include "keys/key_path.h"

namespace keyshard {

class JsonKeyExtractor;

enum class InputFormat { kJson, kDelimited, kLine };

struct KeySpec {
  InputFormat format = InputFormat::kJson;
  std::vector<KeyPath> paths;     // --format json
  std::vector<uint32_t> fields;   // --format delimited, 1-based
  char delimiter = '\t';
  bool validate = true;           // --format json: validate each whole line
  size_t tree_line_limit = kTreeLineLimit;  // --format json: see JsonKeyExtractor
  size_t block_window = kBlockWindow;       // --format json: see JsonKeyExtractor
};

class KeyExtractor {
 public:
  explicit KeyExtractor(const KeySpec& spec);
  ~KeyExtractor();
  KeyExtractor(KeyExtractor&&) noexcept;
  KeyExtractor& operator=(KeyExtractor&&) noexcept;

  /// The key of one line (without its '\n'); `readable` as for JsonKeyExtractor::extract.
  /// `starts_input`: the line is the first of an input, where a UTF-8 byte order mark is not
  /// part of a delimited or plain line's text (a JSON line that has one is a bad line).
  Extraction extract(std::string_view line, size_t readable, bool starts_input = false);

  /// The same, for the lines of a block of whole lines: begin_block first (`size` bytes at
  /// `text`, then kLinePadding readable bytes), then extract_in_block on each of its lines,
  /// in order, each once. The result of each line is the one extract() gives; with
  /// --format json the block is parsed as a whole where it can be (see JsonKeyExtractor).
  void begin_block(const char* text, size_t size);
  Extraction extract_in_block(std::string_view line, size_t readable, bool starts_input = false);
  /// How many lines so far had their result from a window's parse (see JsonKeyExtractor).
  size_t lines_from_blocks() const;
  /// How many of those the scan of a window's structural index confirmed.
  size_t lines_from_scans() const;

 private:
  Extraction extract_delimited(std::string_view line);

  KeySpec spec_;
  std::unique_ptr<JsonKeyExtractor> json_;
  // Scratch: each -k field of the current line, in the order of spec_.fields (only those: a
  // -k of a field far along a long line takes no memory per field before it).
  std::vector<std::string_view> fields_;
  std::vector<uint32_t> by_field_;  // indices into spec_.fields, by field number
  std::string composite_;
  std::vector<std::string> field_names_;  // "field 3", for messages
};

}  // namespace keyshard
