#include "checkpoint/checkpointer.h"

#include "checkpoint/checkpoint_store.h"

namespace keyshard {

Checkpointer::Checkpointer(std::string dir, Checkpoint base, unsigned owners, bool with_salt)
    : dir_(std::move(dir)), base_(std::move(base)), owners_(owners), with_salt_(with_salt) {}

bool Checkpointer::complete(const Pending& pending) const {
  return pending.reader && (!with_salt_ || pending.salt) && pending.owners.size() == owners_;
}

void Checkpointer::expect(uint64_t sequence, ReaderCut cut) {
  std::lock_guard lock(mutex_);
  pending_[sequence].reader = std::move(cut);
}

void Checkpointer::salt_state(uint64_t sequence, SaltState state) {
  std::lock_guard lock(mutex_);
  pending_[sequence].salt = std::move(state);
}

Status Checkpointer::report(uint64_t sequence, OwnerCut cut) {
  Pending done;
  {
    std::lock_guard lock(mutex_);
    Pending& pending = pending_[sequence];
    pending.owners.push_back(std::move(cut));
    if (!complete(pending)) return {};
    done = std::move(pending);
    pending_.erase(sequence);
  }
  return write(assemble(std::move(*done.reader), std::move(done.owners), std::move(done.salt)));
}

Checkpoint Checkpointer::assemble(ReaderCut reader, std::vector<OwnerCut> owners,
                                  std::optional<SaltState> salt) const {
  Checkpoint checkpoint = base_;
  checkpoint.inputs = std::move(reader.inputs);
  checkpoint.current = reader.current;
  const size_t partitions = base_.stats.partition_events.size();
  checkpoint.stats = RunStats(static_cast<uint32_t>(partitions));
  if (!checkpoint.exec) checkpoint.outputs.assign(partitions, OutputState{});
  for (OwnerCut& owner : owners) {
    checkpoint.stats.merge(owner.stats);
    for (auto& [partition, state] : owner.outputs) {
      if (partition < checkpoint.outputs.size()) checkpoint.outputs[partition] = std::move(state);
    }
    if (owner.dead_letter) checkpoint.dead_letter = std::move(owner.dead_letter);
    if (!owner.input_lines.empty()) {
      for (size_t i = 0; i < checkpoint.inputs.size() && i < owner.input_lines.size(); ++i) {
        checkpoint.inputs[i].lines = owner.input_lines[i];
      }
    }
  }
  checkpoint.stats.bytes_read = reader.bytes_read;
  checkpoint.stats.heavy_hitters = HeavyHitters(1);  // estimates are not part of a checkpoint
  if (salt) checkpoint.salt = std::move(*salt);
  return checkpoint;
}

Status Checkpointer::write(const Checkpoint& checkpoint) {
  Status status = write_checkpoint(dir_, checkpoint);
  if (status) ++written_;
  return status;
}

}  // namespace keyshard
