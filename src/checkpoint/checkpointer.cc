#include "checkpoint/checkpointer.h"

#include "checkpoint/checkpoint_store.h"
#include "util/durable_files.h"
#include "util/thread_priority.h"

namespace keyshard {

Checkpointer::Checkpointer(std::string dir, Checkpoint base, unsigned owners, bool with_salt,
                           std::vector<std::string> sync_paths,
                           std::function<void(Status)> on_failure)
    : dir_(std::move(dir)),
      base_(std::move(base)),
      owners_(owners),
      with_salt_(with_salt),
      sync_paths_(std::move(sync_paths)),
      on_failure_(std::move(on_failure)) {}

Checkpointer::~Checkpointer() { (void)finish(); }

void Checkpointer::start() {
  writer_ = std::thread([this] {
    name_this_thread("ks-checkpoint");
    write_queued();
  });
}

Status Checkpointer::finish() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queued_changed_.notify_all();
  }
  if (writer_.joinable()) writer_.join();
  std::lock_guard lock(mutex_);
  return failure_;
}

Status Checkpointer::sync_outputs() const { return make_durable(sync_paths_); }

void Checkpointer::write_queued() {
  std::unique_lock lock(mutex_);
  for (;;) {
    queued_changed_.wait(lock, [&] { return queued_ || sync_requested_ || stopping_; });
    std::optional<Checkpoint> checkpoint = std::move(queued_);
    queued_.reset();
    if (!checkpoint && !sync_requested_) return;  // stopping, nothing left
    sync_requested_ = false;
    lock.unlock();
    Status status = sync_outputs();
    if (status && checkpoint) status = write(*checkpoint);
    if (status && !checkpoint) ++synced_ahead_;
    lock.lock();
    if (!status) {
      failure_ = status;
      lock.unlock();
      on_failure_(std::move(status));
      return;
    }
  }
}

void Checkpointer::sync_ahead() {
  if (sync_paths_.empty()) return;
  std::lock_guard lock(mutex_);
  sync_requested_ = true;
  queued_changed_.notify_all();
}

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

void Checkpointer::report(uint64_t sequence, OwnerCut cut) {
  Pending done;
  {
    std::lock_guard lock(mutex_);
    Pending& pending = pending_[sequence];
    pending.owners.push_back(std::move(cut));
    if (!complete(pending)) return;
    done = std::move(pending);
    pending_.erase(sequence);
  }
  // Assembled outside the lock; cuts complete in sequence order (each owner reports in order,
  // and the last report of a cut comes after that owner's report of every earlier cut).
  HeavyHitters heavy_hitters = settle_ ? settle_(done.reader->interval) : HeavyHitters(1);
  Checkpoint checkpoint = assemble(std::move(*done.reader), std::move(done.owners),
                                   std::move(done.salt), std::move(heavy_hitters));
  std::lock_guard lock(mutex_);
  queued_ = std::move(checkpoint);
  queued_changed_.notify_all();
}

Checkpoint Checkpointer::assemble(ReaderCut reader, std::vector<OwnerCut> owners,
                                  std::optional<SaltState> salt,
                                  HeavyHitters heavy_hitters) const {
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
  checkpoint.stats.heavy_hitters = std::move(heavy_hitters);
  if (salt) checkpoint.salt = std::move(*salt);
  return checkpoint;
}

Status Checkpointer::write(const Checkpoint& checkpoint) {
  Status status = write_checkpoint(dir_, checkpoint);
  if (status) ++written_;
  return status;
}

}  // namespace keyshard
