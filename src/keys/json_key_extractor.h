// Key extraction for --format json. By default every line is validated as a whole JSON object
// with simdjson's DOM parser (runtime-dispatched to the best SIMD kernel of the machine) and the
// key is looked up in the parsed tree. A key part that is not a string takes its raw text from
// the On Demand path walker (the tree does not keep it). A line with a number too large for
// simdjson's tree (still valid JSON) is checked by the strict grammar checker instead, then
// walked. --no-validate uses only the walker, which stops as soon as the key is found.
#pragma once

#include <simdjson.h>

#include <span>
#include <string>
#include <vector>

#include "keys/extraction.h"
#include "keys/json_path_walker.h"
#include "keys/key_path.h"

namespace keyshard {

class JsonKeyExtractor {
 public:
  JsonKeyExtractor(std::span<const KeyPath> paths, bool validate);

  /// The key of `line` (without '\n'); `readable` bytes from line.data() may be read, at least
  /// line.size() + kLinePadding. The key stays valid until the next call.
  Extraction extract(std::string_view line, size_t readable);

 private:
  simdjson::dom::parser parser_;
  JsonPathWalker walker_;
  std::vector<KeyPath> paths_;
  std::vector<std::string_view> parts_;
  std::string composite_;
  bool validate_;
};

}  // namespace keyshard
