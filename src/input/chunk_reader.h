// The reader stage: turns the inputs, in order, into chunks of whole lines. A line never spans
// two chunks; a line longer than a chunk grows that chunk, up to the --max-line-size limit.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "input/chunk.h"
#include "input/input_position.h"
#include "input/input_source.h"
#include "util/status.h"

namespace keyshard {

/// Where to start reading one input: from `position.offset` (0: the start). A non-zero offset
/// is checked against the recorded fingerprints (and device and inode, when recorded).
struct InputStart {
  InputPosition position;
  bool restart_if_changed = false;  // --incremental: a changed input is read again from 0
  bool finished = false;  // resume: read to its end already; it is not opened again
  bool carried = false;   // --incremental: not named this time; its position is only kept
};

class ChunkReader {
 public:
  /// `paths` in order ("-" is stdin); `chunk_size` is the usual size of a chunk. `warn` (when
  /// given) hears of an input truncated while it was read.
  ChunkReader(std::vector<std::string> paths, size_t chunk_size, size_t max_line_size,
              std::function<void(const std::string&)> warn = {});
  /// Reads `starts` in order, each from its recorded position. With `hold_unterminated`, a last
  /// line without '\n' is not delivered (it waits for the next --incremental run).
  ChunkReader(std::vector<InputStart> starts, size_t chunk_size, size_t max_line_size,
              bool hold_unterminated, std::function<void(const std::string&)> warn);

  /// From a pipe that stays quiet, an empty chunk (flush_after, no lines) once every `every`
  /// too, beyond the one that makes the owners write out what they hold: with --exec, the
  /// owners then look at their children, so that one that failed meanwhile stops the run now,
  /// not when the stream sends its next line. Zero (the default): none.
  void look_in_while_quiet(std::chrono::milliseconds every) { look_in_every_ = every; }

  /// Fills `chunk` with the next lines, and its line_starts with where each begins. Returns
  /// false at the end of all inputs (chunk unused) or on error (then `status` says why; lines
  /// before the failure were all delivered).
  bool next(Chunk& chunk, Status& status);
  /// Opens the first input to read now, and puts it at its recorded position (checking the
  /// bytes before it), as next() would: an input that changed since a checkpoint is refused
  /// before anything else of the run starts (--exec children). A damaged zstd frame met on the
  /// way, or a read cut short by a signal, is left for next() to report, as the run judges
  /// them there.
  Status open_first();
  /// Whether every input is read to its end, so that next() would return false without reading:
  /// true once the last chunk of the last input is out, where a read met that input's end as
  /// the chunk was filled. It does for a file; from a pipe, only when the writer closed it
  /// before that last read (otherwise the next read finds the end). A signal that comes once
  /// it is true has stopped nothing.
  bool at_end() const;

  /// Total bytes read from the inputs (decompressed).
  uint64_t bytes_read() const { return bytes_read_; }
  /// Bytes handed out in chunks (what a checkpoint counts as consumed).
  uint64_t bytes_delivered() const { return bytes_delivered_; }
  /// Display names of the inputs opened so far, in order.
  const std::vector<std::string>& input_names() const { return names_; }

  /// Every input's position after the last chunk handed out, fingerprints included; inputs
  /// not opened yet keep their starting position. `current` receives the input in progress.
  std::vector<InputPosition> positions(uint32_t& current) const;
  /// After next() failed inside an input (a line longer than --max-line-size, a read error, a
  /// damaged zstd stream): the input of the line it failed in, whose number is the count of
  /// the input's lines handed out before, plus 1 (known only to the stages after the reader,
  /// which add it to the message).
  struct FailedLine {
    uint32_t input;
    bool first_after_restart;  // the input is read again from 0 and no chunk of it went out
  };
  const std::optional<FailedLine>& failed_line() const { return failed_line_; }
  /// After next() failed on a zstd frame that did not pass its check (also one met while an
  /// input was read up to its recorded position): the input, where that frame's content starts (see
  /// InputSource::corrupt_frame_start), and whether this run read the input again from 0, so
  /// that the position it was given to start from is in other bytes' terms.
  struct CorruptFrame {
    uint32_t input;
    uint64_t start;
    bool restarted;
  };
  const std::optional<CorruptFrame>& corrupt_frame() const { return corrupt_frame_; }
  /// Whether a read error is waiting to be reported by the next call to next().
  bool error_pending() const { return !pending_error_.ok(); }

 private:
  // Opening and positioning an input: input_opening.cc.
  /// Moves next_path_ past the inputs finished already; whether one is left to open.
  bool next_unfinished();
  Status open_next_input();
  // Makes the input just taken from starts_, named `name`, the one in progress, not positioned.
  void enter_input(std::string name);
  // Records that next() failed in the input in progress.
  void fail_here(bool first_after_restart);
  // Records a failed zstd frame of the input in progress, if the source met one.
  void note_corrupt_frame();
  Status position_input(InputStart& start);
  static void ensure_capacity(Chunk& chunk, size_t capacity);
  // Fills `chunk` with a view of the lines that follow in a file read in place; false when
  // they are to be read into the chunk instead.
  bool take_in_place(Chunk& chunk);
  // Numbers a filled chunk and moves the input's position past it.
  void deliver(Chunk& chunk);

  std::vector<InputStart> starts_;
  std::vector<InputPosition> positions_;
  FingerprintWindow window_;  // of the input in progress
  bool hold_unterminated_ = false;
  bool opened_ = false;      // an input has been opened
  bool positioned_ = false;  // ... and stands at its starting position (fingerprints checked)
  bool restarted_ = false;   // ... read again from 0: its first chunk says so
  bool read_again_ = false;  // ... read again from 0 (for all of its chunks)
  std::function<void(const std::string&)> warn_;
  uint64_t bytes_delivered_ = 0;
  size_t next_path_ = 0;
  size_t chunk_size_;
  size_t max_line_size_;
  // The most lines in a chunk: every line costs a few words in each chunk's routing tables, so
  // a chunk of very short lines (or empty ones) is cut shorter, which bounds memory.
  size_t max_lines_ = std::max<size_t>(4096, chunk_size_ / 16);
  std::unique_ptr<InputSource> source_;
  uint32_t input_index_ = 0;
  uint64_t input_offset_ = 0;  // offset of the next byte handed out in a chunk
  std::string carry_;          // the start of a line that did not fit the previous chunk
  Status pending_error_;       // a read error, reported once the lines before it are out
  bool source_done_ = false;
  // From a pipe: lines were handed out since the last chunk that made the owners write out
  // what they hold, which happens once the pipe is quiet, at most every kFlushDelay.
  bool unflushed_ = false;
  std::chrono::steady_clock::time_point last_flush_{};
  static constexpr std::chrono::milliseconds kFlushDelay{100};
  std::chrono::milliseconds look_in_every_{0};
  uint64_t sequence_ = 0;
  uint64_t bytes_read_ = 0;
  std::vector<std::string> names_;
  std::optional<FailedLine> failed_line_;
  std::optional<CorruptFrame> corrupt_frame_;
};

}  // namespace keyshard
