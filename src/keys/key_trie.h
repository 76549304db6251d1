// The -k paths as a trie, so that one walk over a line finds every part of a composite key:
// used by the On Demand walker, the plain-object scan and the grammar checker.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "keys/key_path.h"

namespace keyshard {

struct KeyTrie {
  static constexpr uint32_t kNoNode = UINT32_MAX;
  struct Child {
    std::string name;                     // an object member of this name leads to `node`
    std::optional<uint64_t> array_index;  // and so does this element of an array
    uint32_t node;
  };
  struct Node {
    std::vector<Child> children;
    std::vector<uint32_t> parts;  // the key parts whose path ends here (two -k may name one)
  };

  /// `paths` are the -k paths, in order (part i is paths[i]).
  explicit KeyTrie(std::span<const KeyPath> paths);

  std::vector<Node> nodes;  // nodes[0] is the top-level object
  size_t parts = 0;
};

}  // namespace keyshard
