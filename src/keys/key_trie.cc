#include "keys/key_trie.h"

namespace keyshard {

KeyTrie::KeyTrie(std::span<const KeyPath> paths) : parts(paths.size()) {
  nodes.emplace_back();
  for (size_t part = 0; part < paths.size(); ++part) {
    uint32_t node = 0;
    for (const PathComponent& component : paths[part].components) {
      uint32_t next = kNoNode;
      for (const Child& child : nodes[node].children) {
        if (child.name == component.name) next = child.node;
      }
      if (next == kNoNode) {
        next = static_cast<uint32_t>(nodes.size());
        nodes[node].children.push_back(Child{component.name, component.array_index, next});
        nodes.emplace_back();
      }
      node = next;
    }
    nodes[node].parts.push_back(static_cast<uint32_t>(part));
  }
}

}  // namespace keyshard
