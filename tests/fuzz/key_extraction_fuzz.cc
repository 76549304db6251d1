// Fuzz target: key extraction from a block of NDJSON lines, as a router does it.
//
// The first byte chooses the -k paths and the mode; the rest is the block, padded with zeros as
// the chunk reader pads a chunk. Each line of it must get the same result (key, or reason and
// detail) from the whole-block parse as from a parse of the line alone, in a buffer of its own;
// so must it with --no-validate, in the block (where the scan of a window may stop at the key)
// and alone. The line index must find the lines a plain split finds, and the strict grammar
// check must agree with the validating extractor on whether the line is well-formed JSON.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "input/line_index.h"
#include "keys/json_grammar.h"
#include "keys/key_extractor.h"
#include "keys/key_path.h"

namespace {

using namespace keyshard;

struct Extractors {
  KeyExtractor alone;
  KeyExtractor in_blocks;
  KeyExtractor unvalidated_alone;
  KeyExtractor unvalidated;
};

KeySpec spec_for(unsigned selector, bool validate) {
  static const std::vector<std::vector<std::string_view>> kKeys = {
      {"k"}, {"o.x"}, {"k", "a.1"}, {"/a~1b/0"}};
  KeySpec spec;
  for (std::string_view text : kKeys[selector % kKeys.size()]) {
    KeyPath path;
    if (!parse_key_path(text, path)) std::abort();
    spec.paths.push_back(path);
  }
  spec.validate = validate;
  if ((selector & 4) != 0) spec.tree_line_limit = 48;  // longer lines take the grammar's path
  if ((selector & 8) != 0) spec.block_window = 64;     // a block is parsed a few lines at a time
  return spec;
}

// Reused from input to input, as a router reuses its extractor from chunk to chunk.
Extractors& extractors_for(unsigned selector) {
  static std::unique_ptr<Extractors> cache[16];
  std::unique_ptr<Extractors>& slot = cache[selector & 15];
  if (!slot) {
    slot.reset(new Extractors{KeyExtractor(spec_for(selector, true)),
                              KeyExtractor(spec_for(selector, true)),
                              KeyExtractor(spec_for(selector, false)),
                              KeyExtractor(spec_for(selector, false))});
  }
  return *slot;
}

struct Result {
  bool ok;
  BadReason reason;
  std::string detail;
  std::string key;
};

Result result_of(const Extraction& extraction) {
  return {extraction.ok, extraction.reason, std::string(extraction.detail),
          std::string(extraction.key)};
}

bool operator==(const Result& a, const Result& b) {
  return a.ok == b.ok && a.reason == b.reason && a.detail == b.detail && a.key == b.key;
}

// The result for `line` alone: in a buffer of its own, zeros after it.
Result alone(KeyExtractor& extractor, std::string_view line) {
  std::string copy(line);
  copy.append(kLinePadding, '\0');
  return result_of(extractor.extract(std::string_view(copy).substr(0, line.size()), copy.size()));
}

[[noreturn]] void fail(const char* what, std::string_view line) {
  std::fprintf(stderr, "%s; the line (%zu bytes):\n", what, line.size());
  for (const char c : line) std::fprintf(stderr, "%02x", static_cast<unsigned char>(c));
  std::fprintf(stderr, "\n");
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const unsigned selector = data[0];
  Extractors& extractors = extractors_for(selector);
  const std::string_view block(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string text(block);  // as a chunk holds it
  text.append(kLinePadding, '\0');

  std::vector<uint32_t> starts;
  index_lines(text.data(), block.size(), starts);
  std::vector<uint32_t> expected_starts{0};
  for (size_t at = 0; at < block.size(); ++at) {
    if (block[at] == '\n' && at + 1 < block.size()) expected_starts.push_back(at + 1);
  }
  if (!block.empty()) expected_starts.push_back(static_cast<uint32_t>(block.size()));
  if (starts != expected_starts) fail("index_lines found other lines than a plain split", block);

  extractors.in_blocks.begin_block(text.data(), block.size());
  extractors.unvalidated.begin_block(text.data(), block.size());
  for (size_t i = 0; i + 1 < starts.size(); ++i) {
    std::string_view line(text.data() + starts[i], starts[i + 1] - starts[i]);
    if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
    const size_t readable = text.size() - starts[i];
    const Result on_its_own = alone(extractors.alone, line);
    if (!(result_of(extractors.in_blocks.extract_in_block(line, readable)) == on_its_own)) {
      fail("the block parse and the line parse disagree", line);
    }
    if (!(result_of(extractors.unvalidated.extract_in_block(line, readable)) ==
          alone(extractors.unvalidated_alone, line))) {
      fail("--no-validate: the line in its block and the line alone differ", line);
    }
    if (on_its_own.ok || on_its_own.reason != BadReason::kEmptyLine) {
      const bool well_formed = check_json_grammar(line).shape != JsonShape::kInvalid;
      if (well_formed != (on_its_own.ok || on_its_own.reason != BadReason::kInvalidJson)) {
        fail("the grammar and the validating extractor disagree on well-formedness", line);
      }
    }
  }
  return 0;
}
