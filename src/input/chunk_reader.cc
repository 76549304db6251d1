// Reads big blocks and cuts them after their last '\n'; the remainder is carried into the next
// chunk. From a pipe it hands on whatever has arrived instead of waiting to fill a block, so the
// producer upstream never stalls on keyshard.
#include "input/chunk_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "input/line_index.h"
#include "keys/json_key_extractor.h"
#include "util/interrupt.h"
#include "util/number_text.h"

namespace keyshard {

ChunkReader::ChunkReader(std::vector<std::string> paths, size_t chunk_size, size_t max_line_size,
                         std::function<void(const std::string&)> warn)
    : warn_(std::move(warn)), chunk_size_(chunk_size), max_line_size_(max_line_size) {
  if (paths.empty()) paths.push_back("-");
  for (std::string& path : paths) starts_.push_back(InputStart{InputPosition{std::move(path)}});
  for (const InputStart& start : starts_) positions_.push_back(start.position);
}

ChunkReader::ChunkReader(std::vector<InputStart> starts, size_t chunk_size, size_t max_line_size,
                         bool hold_unterminated, std::function<void(const std::string&)> warn)
    : starts_(std::move(starts)),
      hold_unterminated_(hold_unterminated),
      warn_(std::move(warn)),
      chunk_size_(chunk_size),
      max_line_size_(max_line_size) {
  for (const InputStart& start : starts_) positions_.push_back(start.position);
}

std::vector<InputPosition> ChunkReader::positions(uint32_t& current) const {
  std::vector<InputPosition> result = positions_;
  current = 0;
  while (current < starts_.size() && starts_[current].finished) ++current;
  if (opened_) current = input_index_;
  if (positioned_) {  // an input cut short while skipping keeps its recorded position
    InputPosition& now = result[input_index_];
    now.head_hash = window_.head_hash();
    now.tail_hash = window_.tail_hash();
  }
  return result;
}

void ChunkReader::ensure_capacity(Chunk& chunk, size_t capacity) {
  if (chunk.capacity >= capacity && chunk.data) return;
  auto data = std::make_unique_for_overwrite<char[]>(capacity + kLinePadding);
  if (chunk.size > 0) std::memcpy(data.get(), chunk.data.get(), chunk.size);
  std::memset(data.get() + capacity, 0, kLinePadding);
  chunk.data = std::move(data);
  chunk.capacity = capacity;
}

void ChunkReader::fail_here(bool first_after_restart) {
  failed_line_ = FailedLine{input_index_, first_after_restart};
  note_corrupt_frame();
}

void ChunkReader::note_corrupt_frame() {
  if (source_ && source_->corrupt_frame_start) {
    corrupt_frame_ = CorruptFrame{input_index_, *source_->corrupt_frame_start, read_again_};
  }
}

bool ChunkReader::at_end() const {
  if (source_ || !pending_error_.ok()) return false;
  return std::all_of(starts_.begin() + static_cast<long>(next_path_), starts_.end(),
                     [](const InputStart& start) { return start.finished; });
}

bool ChunkReader::next(Chunk& chunk, Status& status) {
  if (!pending_error_.ok()) {  // reported after the lines read before it were delivered
    status = pending_error_;
    fail_here(false);
    return false;
  }
  for (;;) {
    if (!source_) {
      if (!next_unfinished()) return false;
      status = open_next_input();
      if (!status) return false;
      if (!source_) continue;  // left to the next run
    }

    chunk.flush_after = false;
    chunk.view = nullptr;
    chunk.window.reset();
    if (source_->streaming() && (unflushed_ || look_in_every_.count() > 0)) {
      // Lines handed out from a pipe wait in the owners' buffers; once the pipe has been quiet
      // for a moment, an empty chunk tells the owners to write them out. (And, when asked, one
      // every look_in_every_ while it stays quiet.)
      const auto waited = std::chrono::steady_clock::now() - last_flush_;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          (unflushed_ ? kFlushDelay : look_in_every_) - waited);
      // In steps of kFlushDelay at most, so that a signal is seen as soon as a read sees it.
      bool ready = false;
      for (int64_t wait = std::max<int64_t>(0, left.count());;) {
        const int64_t step = std::min<int64_t>(wait, kFlushDelay.count());
        ready = source_->ready(static_cast<int>(step)) || interrupt_signal() != 0;
        wait -= step;
        if (ready || wait <= 0) break;
      }
      if (!ready) {
        ensure_capacity(chunk, chunk_size_);
        chunk.size = 0;
        chunk.line_starts.assign(1, 0);  // no lines
        chunk.final_fragment = false;
        chunk.flush_after = true;
        std::memset(chunk.data.get(), 0, kLinePadding);
        unflushed_ = false;
        last_flush_ = std::chrono::steady_clock::now();
        deliver(chunk);
        return true;
      }
    }
    // A chunk that grew for a long line goes back to the usual size when it is reused.
    if (chunk.capacity > 4 * chunk_size_ && carry_.size() < chunk_size_) {
      chunk.data.reset();
      chunk.capacity = 0;
    }
    if (carry_.empty() && !source_done_ && take_in_place(chunk)) {
      deliver(chunk);
      return true;
    }
    chunk.size = 0;
    // Never more than one line of the longest allowed length (and its '\n') per chunk: a
    // longer line then always shows up as a full chunk without a newline.
    const size_t line_limit = max_line_size_ + 1;
    // How much this chunk may hold: the usual size, doubled while a line does not fit. Not the
    // capacity of the chunk from the pool, which may have grown for a long line earlier: which
    // chunk the reader is given depends on timing, and a chunk's size decides where the
    // checkpoints fall (and so where a compressed output's frames end).
    size_t limit = std::min(std::max(chunk_size_, carry_.size() + chunk_size_ / 2), line_limit);
    ensure_capacity(chunk, limit);
    std::memcpy(chunk.data.get(), carry_.data(), carry_.size());
    chunk.size = carry_.size();
    carry_.clear();

    const char* last_newline =
        static_cast<const char*>(memrchr(chunk.data.get(), '\n', chunk.size));
    // Lines left over from the last chunk (cut at max_lines_) may make a chunk on their own.
    const bool enough = last_newline && (chunk.size >= chunk_size_ ||
                                         end_of_lines(chunk.data.get(), chunk.size, max_lines_) <
                                             chunk.size);
    Status read_status;
    for (;;) {
      if (source_done_ || enough) break;  // (source_done_: the input is at its end already)
      if (chunk.size == limit) {
        if (last_newline) break;
        if (limit >= line_limit) {
          fail_here(restarted_);
          // (Lines ended by a carriage return alone read as one long line: say so. Not of a CR
          // in the last byte, most likely a CRLF's first half.)
          const bool has_cr =
              chunk.size > 1 && std::memchr(chunk.data.get(), '\r', chunk.size - 1) != nullptr;
          status = Status::error(
                       "the line is longer than --max-line-size (" +
                           with_commas(max_line_size_) + " bytes); it starts at byte " +
                           with_commas(input_offset_) +
                           (has_cr ? " (it holds carriage returns: are the lines ended by CR "
                                     "alone? convert them first, e.g. tr '\\r' '\\n')"
                                   : ""),
                       source_->name())
                       .because(Cause::kLineTooLong);
          return false;
        }
        limit = std::min(limit * 2, line_limit);
        ensure_capacity(chunk, limit);
      }
      const size_t wanted = limit - chunk.size;
      size_t got = 0;
      if (source_->streaming() && interrupt_signal() != 0) {
        // Caught since the last read, the signal would not interrupt a read that blocks on a
        // quiet pipe: stop as a read cut short by it does. (A file's reads do not wait: its chunk
        // is filled, and its end found, so that a signal during its last chunk stops nothing.)
        read_status = Status::error("interrupted", source_->name());
        break;
      }
      read_status = source_->read(chunk.data.get() + chunk.size, wanted, got);
      if (!read_status) break;
      if (got == 0) {
        source_done_ = true;
        if (source_->incomplete_frame && warn_) {
          warn_(source_->name() + ": ends inside a zstd frame (still being written?); the "
                                  "next --incremental run reads on from there");
        }
        if (source_->shrunk_to && warn_) {
          warn_(fmt::format("{}: truncated from {} to {} bytes while it was read, after its "
                            "first {} bytes were read: their lines were used, and the last of "
                            "them may be cut short",
                            source_->name(), source_->file_size, *source_->shrunk_to,
                            source_->read_when_shrunk));
        }
        break;
      }
      const char* fresh = chunk.data.get() + chunk.size;
      chunk.size += got;
      bytes_read_ += got;
      if (const void* found = memrchr(fresh, '\n', got)) {
        last_newline = static_cast<const char*>(found);
      }
      // A short read from a pipe: work on what has arrived rather than wait for more (from a
      // compressed stream, once nothing more is waiting). From a regular file it is the end,
      // which the next read confirms at once, so that at_end() knows it with this chunk.
      if (got < wanted && last_newline && source_->streaming() &&
          (!source_->compressed() || !source_->ready())) {
        break;
      }
    }

    // The chunk's lines are found once, here, up to max_lines_ (the cut, when there are more):
    // the index that the routers use (trimmed below to the bytes this chunk keeps).
    const size_t cut =
        index_lines(chunk.data.get(), chunk.size, chunk.line_starts, max_lines_);
    if (!read_status) {
      if (cut < chunk.size) index_lines(chunk.data.get(), chunk.size, chunk.line_starts);
      // Deliver the whole lines read before the failure; report it on the next call.
      if (!last_newline) {
        status = read_status;
        fail_here(restarted_);
        return false;
      }
      pending_error_ = read_status;
      note_corrupt_frame();  // (before the source goes)
      chunk.size = static_cast<size_t>(last_newline - chunk.data.get()) + 1;
      chunk.final_fragment = false;
      source_.reset();
    } else if (source_done_ && cut < chunk.size) {
      // At the end of the input, but too many lines for one chunk: the rest comes next.
      carry_.assign(chunk.data.get() + cut, chunk.size - cut);
      chunk.size = cut;
      chunk.final_fragment = false;
    } else if (source_done_) {
      const bool may_grow = source_ && source_->may_grow;
      source_.reset();
      if (may_grow && chunk.size > 0 && chunk.data[chunk.size - 1] != '\n') {
        // --incremental: the last line may still be being written; the next run reads it.
        chunk.size = last_newline ? static_cast<size_t>(last_newline - chunk.data.get()) + 1 : 0;
      }
      if (chunk.size == 0) continue;  // an empty input, or one that ended on a chunk boundary
      chunk.final_fragment = chunk.data[chunk.size - 1] != '\n';
    } else {
      const size_t keep = std::min(static_cast<size_t>(last_newline - chunk.data.get()) + 1, cut);
      if (source_->unread(chunk.size - keep)) {
        bytes_read_ -= chunk.size - keep;  // (a file read in place goes on from the cut)
      } else {
        carry_.assign(chunk.data.get() + keep, chunk.size - keep);
      }
      chunk.size = keep;
      chunk.final_fragment = false;
    }
    trim_line_index(chunk.line_starts, chunk.size);
    std::memset(chunk.data.get() + chunk.size, 0, std::min(kLinePadding, chunk.capacity - chunk.size));
    if (source_ && source_->streaming()) {
      // A pipe that has nothing more for now: the owners write out what they hold (at most
      // every kFlushDelay; otherwise an empty chunk does it later, see above).
      const auto now = std::chrono::steady_clock::now();
      chunk.flush_after = now - last_flush_ >= kFlushDelay && !source_->ready();
      if (chunk.flush_after) last_flush_ = now;
      unflushed_ = !chunk.flush_after;
    } else {
      unflushed_ = false;  // (the end of the run writes everything out)
    }
    deliver(chunk);
    return true;
  }
}

bool ChunkReader::take_in_place(Chunk& chunk) {
  // As when reading into a chunk: at most chunk_size_ bytes, and never more than one line of
  // the longest allowed length (a longer one is then reported by the reading).
  const size_t most = std::min(chunk_size_, max_line_size_ + 1);
  std::shared_ptr<const MappedWindow> window;
  const std::string_view view = source_->view(most + kLinePadding, window);
  if (view.empty()) return false;  // (so near the end too: the last bytes are read as before)
  const auto* last_newline = static_cast<const char*>(memrchr(view.data(), '\n', most));
  if (last_newline == nullptr) return false;  // a line longer than a chunk: read it
  size_t size = static_cast<size_t>(last_newline - view.data()) + 1;
  size = index_lines(view.data(), size, chunk.line_starts, max_lines_);
  source_->skip(size);
  bytes_read_ += size;
  chunk.view = view.data();
  chunk.view_readable = view.size();
  chunk.window = std::move(window);
  chunk.size = size;
  chunk.final_fragment = false;
  unflushed_ = false;  // (a regular file: the end of the run writes everything out)
  return true;
}

void ChunkReader::deliver(Chunk& chunk) {
  chunk.sequence = sequence_++;
  chunk.input = input_index_;
  chunk.input_offset = input_offset_;
  chunk.input_restarted = restarted_;
  restarted_ = false;
  input_offset_ += chunk.size;
  bytes_delivered_ += chunk.size;
  window_.add({chunk.text(), chunk.size});
  positions_[input_index_].offset = input_offset_;
}

}  // namespace keyshard
