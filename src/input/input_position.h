// Where a run stands in one input, and how to recognise that input again: the reader keeps one
// per input, checkpoints record them, and resume and --incremental runs check them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace keyshard {

inline constexpr uint64_t kFingerprintBytes = 4096;

/// The fingerprints are hashes of the (decompressed) bytes already read: the head covers
/// [0, min(offset, 4096)) and the tail [offset - min(offset, 4096), offset). Bytes before the
/// offset never change when a file only grows, so both survive appends; a rewrite, a
/// copy-truncate or a reused inode changes them.
struct InputPosition {
  std::string path;          // as given ("-": stdin)
  uint64_t device = 0;       // of a regular file (0: not a regular file)
  uint64_t inode = 0;
  uint64_t size = 0;         // of the file when it was opened (compressed size for zstd)
  bool compressed = false;
  uint64_t offset = 0;       // bytes consumed, after decompression: the next line starts here
  uint64_t lines = 0;        // lines before offset (for line numbers in messages)
  uint64_t head_hash = 0;
  uint64_t tail_hash = 0;
};

/// The first and the most recent kFingerprintBytes bytes of a stream, for its fingerprints.
class FingerprintWindow {
 public:
  void reset() {
    head_.clear();
    tail_.clear();
  }
  /// Adds the next bytes of the stream.
  void add(std::string_view bytes);
  uint64_t head_hash() const;
  uint64_t tail_hash() const;
  /// Sets the two windows from bytes read back from a file.
  void assign(std::string head, std::string tail) {
    head_ = std::move(head);
    tail_ = std::move(tail);
  }

 private:
  std::string head_;
  std::string tail_;
};

}  // namespace keyshard
