// The reader stage: turns the inputs, in order, into chunks of whole lines. A line never spans
// two chunks; a line longer than a chunk grows that chunk, up to the --max-line-size limit.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "input/chunk.h"
#include "input/input_source.h"
#include "util/status.h"

namespace keyshard {

class ChunkReader {
 public:
  /// `paths` in order ("-" is stdin); `chunk_size` is the usual size of a chunk.
  ChunkReader(std::vector<std::string> paths, size_t chunk_size, size_t max_line_size);

  /// Fills `chunk` with the next lines. Returns false at the end of all inputs (chunk unused)
  /// or on error (then `status` says why; lines before the failure were all delivered).
  bool next(Chunk& chunk, Status& status);

  /// Total bytes read from the inputs (decompressed).
  uint64_t bytes_read() const { return bytes_read_; }
  /// Display names of the inputs opened so far, in order.
  const std::vector<std::string>& input_names() const { return names_; }

 private:
  Status open_next_input();
  static void ensure_capacity(Chunk& chunk, size_t capacity);

  std::vector<std::string> paths_;
  size_t next_path_ = 0;
  size_t chunk_size_;
  size_t max_line_size_;
  std::unique_ptr<InputSource> source_;
  uint32_t input_index_ = 0;
  uint64_t input_offset_ = 0;  // offset of the next byte handed out in a chunk
  std::string carry_;          // the start of a line that did not fit the previous chunk
  Status pending_error_;       // a read error, reported once the lines before it are out
  bool source_done_ = false;
  uint64_t sequence_ = 0;
  uint64_t bytes_read_ = 0;
  std::vector<std::string> names_;
};

}  // namespace keyshard
