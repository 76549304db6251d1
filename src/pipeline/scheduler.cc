// The hand-offs between the reader and the workers (see scheduler.h).
#include "pipeline/scheduler.h"

#include <algorithm>
#include <new>

#include "input/mapped_window.h"
#include "util/elapsed.h"

namespace keyshard {
namespace {

// The reader, waiting for free chunks, is woken when this many are free (the pool holds more).
constexpr size_t kReaderWakeChunks = 2;

}  // namespace

Scheduler::Scheduler(unsigned workers, SaltSequencer* sequencer, Checkpointer* checkpointer)
    : workers_(workers),
      sequencer_(sequencer),
      checkpointer_(checkpointer),
      pool_(4 + 2 * workers),
      slots_(pool_.size()),
      next_to_apply_(workers, 0) {
  for (Chunk& chunk : pool_) free_.push_back(&chunk);
}

Chunk* Scheduler::acquire() {
  std::unique_lock lock(mutex_);
  if (free_.empty()) {
    // Woken for a few chunks at once rather than one by one: each wake-up of the reader
    // takes a core from a worker.
    chunk_freed_.wait(lock, [&] { return free_.size() >= kReaderWakeChunks || stopping_; });
  }
  if (stopping_) return nullptr;
  Chunk* chunk = free_.back();
  free_.pop_back();
  return chunk;
}

void Scheduler::release_unused(Chunk* chunk) {
  std::lock_guard lock(mutex_);
  free_.push_back(chunk);
}

void Scheduler::publish(Chunk* chunk) {
  std::lock_guard lock(mutex_);
  Slot& slot = slots_[chunk->sequence % slots_.size()];
  slot = Slot{chunk, false, false, workers_};
  to_route_.push_back(chunk);
  ++published_;
  changed_.notify_all();
}

void Scheduler::end_of_input() {
  std::lock_guard lock(mutex_);
  input_done_ = true;
  changed_.notify_all();
}

void Scheduler::release_chunks() {
  std::lock_guard lock(mutex_);
  for (Chunk& chunk : pool_) chunk = Chunk();
}

void Scheduler::work(unsigned worker, Router& router, PartitionOwner& owner) {
  std::unique_lock lock(mutex_);
  for (;;) {
    const uint64_t next = next_to_apply_[worker];
    if (next > stop_after_) return;  // a failure stopped the run at an earlier chunk
    Slot& slot = slots_[next % slots_.size()];
    Slot& unsequenced = slots_[next_to_sequence_ % slots_.size()];
    if (next < published_ && slot.sequenced) {
      Chunk* chunk = slot.chunk;
      const bool unrouted = slot.unrouted;
      lock.unlock();
      const auto started = SteadyClock::now();
      Status status;
      if (unrouted) {
        status = out_of_memory();
      } else {
        try {
          status = owner.apply(*chunk);
          if (status && chunk->checkpoint_after && checkpointer_) {
            OwnerCut cut;
            status = owner.checkpoint(cut);
            if (status) checkpointer_->report(chunk->sequence, std::move(cut));
          }
        } catch (const std::bad_alloc&) {
          status = out_of_memory();
        }
      }
      const double took = seconds_since(started);
      lock.lock();
      times_.write += took;
      if (!status) {
        fail(std::move(status), chunk->sequence);
        return;
      }
      ++next_to_apply_[worker];
      if (--slot.owners_left == 0) {
        slot.chunk = nullptr;
        // A chunk read in place lets go of its window of the input file, which is unmapped
        // (outside the lock) once no chunk views it.
        std::shared_ptr<const MappedWindow> window = std::move(chunk->window);
        chunk->view = nullptr;
        free_.push_back(chunk);
        // No worker waits for another's apply: only the reader.
        if (free_.size() == kReaderWakeChunks) chunk_freed_.notify_one();
        if (window) {
          lock.unlock();
          window.reset();
          lock.lock();
        }
      }
    } else if (!sequencing_ && next_to_sequence_ < published_ && unsequenced.routed &&
               !unsequenced.sequenced) {
      // Only with round-robin salting: one worker at a time, chunks in sequence order.
      sequencing_ = true;
      lock.unlock();
      const auto started = SteadyClock::now();
      bool unsequenceable = false;
      try {
        sequencer_->sequence(*unsequenced.chunk);
        if (unsequenced.chunk->checkpoint_after && checkpointer_) {
          checkpointer_->salt_state(unsequenced.chunk->sequence, sequencer_->snapshot());
        }
      } catch (const std::bad_alloc&) {
        unsequenceable = true;  // as for a chunk whose routing failed: every owner stops here
      }
      const double took = seconds_since(started);
      lock.lock();
      times_.sequence += took;
      unsequenced.sequenced = true;
      unsequenced.unrouted = unsequenced.unrouted || unsequenceable;
      if (!unsequenceable) ++next_to_sequence_;
      sequencing_ = false;
      changed_.notify_all();
    } else if (!to_route_.empty() && to_route_.front()->sequence <= stop_after_) {
      Chunk* chunk = to_route_.front();
      to_route_.pop_front();
      lock.unlock();
      const auto started = SteadyClock::now();
      bool unrouted = false;
      try {
        router.route(*chunk);
      } catch (const std::bad_alloc&) {
        unrouted = true;  // each owner then fails at this chunk, having applied those before
      }
      const double took = seconds_since(started);
      lock.lock();
      times_.route += took;
      Slot& routed = slots_[chunk->sequence % slots_.size()];
      routed.routed = true;
      routed.unrouted = unrouted;
      if (sequencer_ == nullptr || unrouted) routed.sequenced = true;
      changed_.notify_all();
    } else if (input_done_ && next == published_) {
      return;
    } else {
      changed_.wait(lock);
    }
  }
}

void Scheduler::fail(Status status, uint64_t sequence) {
  if (error_.ok() || sequence < error_sequence_) {
    error_ = std::move(status);
    error_sequence_ = sequence;
  }
  stop_after_ = std::min(stop_after_, sequence);
  stopping_ = true;
  changed_.notify_all();
  chunk_freed_.notify_all();
}

void Scheduler::abort(Status status) {
  std::lock_guard lock(mutex_);
  fail(std::move(status), 0);
}

Status Scheduler::error() {
  std::lock_guard lock(mutex_);
  return error_;
}

StageTimes Scheduler::times() {
  std::lock_guard lock(mutex_);
  return times_;
}

}  // namespace keyshard
