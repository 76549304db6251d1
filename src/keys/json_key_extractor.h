// Key extraction for --format json. By default every line is validated as a whole JSON object
// with simdjson's DOM parser (runtime-dispatched to the best SIMD kernel of the machine) and the
// key is looked up in the parsed tree. A key part that is not a string takes its raw text from
// the On Demand path walker (the tree does not keep it). Two kinds of line go to the strict
// grammar checker instead, which finds the key in the same pass: a line with a number too large
// for simdjson's tree (still valid JSON), and a line longer than kTreeLineLimit, whose tree
// would take many times its size in memory (the checker's memory does not grow with the line).
// --no-validate uses the walker, which stops as soon as the key is found (long lines too are
// checked whole: the walker's index would also grow with the line); in a block, the scan of
// each window's structural index (below) stops at the key as the walker does, and the walker
// reads only the lines the scan does not confirm.
// The routers hand over whole chunks (begin_block). With validation, a chunk is then read a
// window of lines at a time: plain object lines are confirmed from simdjson's structural index
// alone (plain_object_scan.h), and from the first line the scan cannot confirm, the rest of the
// window is parsed by simdjson as a stream of documents. Line results are unchanged (see
// begin_block).
#pragma once

#include <simdjson.h>

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "keys/extraction.h"
#include "keys/json_grammar.h"
#include "keys/json_limits.h"
#include "keys/json_path_walker.h"
#include "keys/key_path.h"
#include "keys/plain_object_scan.h"

namespace keyshard {

/// Windows larger than this (a window of one long line) are parsed line by line.
inline constexpr size_t kBlockLimit = 4u << 20;

/// Lines with escape sequences in a window that the scan leaves to simdjson one by one; from
/// the next such line, simdjson parses the rest of the window as a stream.
inline constexpr size_t kEscapedLinesAlone = 8;

class JsonKeyExtractor {
 public:
  /// Lines longer than `tree_line_limit` go to the grammar checker; `block_window`: see
  /// kBlockWindow.
  JsonKeyExtractor(std::span<const KeyPath> paths, bool validate,
                   size_t tree_line_limit = kTreeLineLimit, size_t block_window = kBlockWindow);
  JsonKeyExtractor(const JsonKeyExtractor&) = delete;  // (scan_ refers to trie_)
  JsonKeyExtractor& operator=(const JsonKeyExtractor&) = delete;

  /// The key of `line` (without '\n'); `readable` bytes from line.data() may be read, at least
  /// line.size() + kLinePadding. The key stays valid until the next call.
  Extraction extract(std::string_view line, size_t readable);

  /// Starts a block of whole lines, `size` bytes at `text` followed by kLinePadding readable
  /// bytes, whose lines are then passed to extract_in_block in order, each once. Each window
  /// of lines (kBlockWindow) is indexed by simdjson's stage 1 and its plain object lines
  /// confirmed from the index (PlainObjectScan; with --no-validate, up to their key, and every
  /// other line read on its own). With validation, the first few lines with
  /// escape sequences are parsed one by one. From the first other line the scan cannot
  /// confirm, simdjson parses the rest of the window as a stream of documents, which saves
  /// its per-parse set-up on every line. A line gets the same result as from
  /// extract(): each document must be an object or array that lies within its line, with only
  /// whitespace after it; at the first line where that does not hold, or any error, the rest
  /// of the window is parsed line by line (so a bad line is judged, and described, exactly as
  /// on its own).
  void begin_block(const char* text, size_t size);
  Extraction extract_in_block(std::string_view line, size_t readable);
  /// How many lines so far had their result from a window's parse.
  size_t lines_from_blocks() const { return lines_from_blocks_; }
  /// How many of those were confirmed by the scan of a window's structural index.
  size_t lines_from_scans() const { return lines_from_scans_; }

 private:
  Extraction extract_by_grammar(std::string_view line);
  /// The key made of parts_ (one part, or the parts joined).
  Extraction key_from_parts();
  Extraction from_tree(simdjson::dom::element root, std::string_view line, size_t readable);
  std::optional<Extraction> from_block(std::string_view line, size_t readable);
  /// Starts the window of whole lines that begins at `begin` (a line of the block).
  void start_window(const char* begin);
  /// Parses the rest of the window, from its line at `begin`, as a stream of documents.
  void parse_window(const char* begin);
  /// simdjson could not allocate: throws std::bad_alloc, with the parser made anew.
  [[noreturn]] void memory_ran_out();

  simdjson::dom::parser parser_;
  JsonPathWalker walker_;
  KeyTrie trie_;
  PlainObjectScan scan_;
  std::vector<std::optional<std::string_view>> values_;  // per part, from the grammar checker
  std::vector<std::string> unescaped_;                   // per part: a string value's bytes
  std::vector<KeyPath> paths_;
  std::vector<std::string_view> parts_;
  std::string composite_;
  std::string padded_line_;  // --no-validate: the line being read, with padding of its own
  std::string padded_window_;  // what the document stream parses: see parse_window()
  bool validate_;
  size_t tree_line_limit_;
  size_t block_window_;
  bool windows_;  // lines are read a window at a time (not with simdjson's portable kernel)
  // The current block (begin_block) and window.
  const char* block_end_ = nullptr;
  const char* window_text_ = nullptr;
  const char* window_end_ = nullptr;  // a line starting here or later starts the next window
  simdjson::dom::document_stream stream_;
  simdjson::dom::document_stream::iterator document_;
  bool document_used_ = false;  // the current document gave a line's key: move on first
  bool block_active_ = false;   // the window's documents are being read
  bool scan_active_ = false;    // the window's lines are being confirmed by scan_
  size_t escaped_lines_ = 0;    // in the window, lines with escapes judged one by one
  size_t lines_from_blocks_ = 0;
  size_t lines_from_scans_ = 0;
};

}  // namespace keyshard
