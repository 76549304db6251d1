#include "pipeline/salt_sequencer.h"

#include "pipeline/router.h"

namespace keyshard {

SaltSequencer::SaltSequencer(const RunConfig& config)
    : config_(config), partitioner_(config.hash, config.partitions), dealt_(config.salts.size()) {}

void SaltSequencer::sequence(Chunk& chunk) {
  for (const PendingSalt& pending : chunk.pending_salts) {
    const auto& [key, sub_keys] = config_.salts[pending.salt];
    const auto index = static_cast<uint32_t>(dealt_[pending.salt]++ % sub_keys);
    salted_key(key, index, sub_key_);
    chunk.destinations[pending.line] = partitioner_.partition_of(sub_key_);
    if (config_.annotate_salt) chunk.salt_of_line[pending.line] = static_cast<int32_t>(index);
  }
  if (!config_.ordered_stdout() && !chunk.pending_salts.empty()) {
    group_by_partition(chunk, config_.partitions, cursor_);
  }
}

}  // namespace keyshard
