// Where an owner ends each write to a partition file. The page cache holds a file in folios of
// up to 2 MiB, each as large as the write that fills it and its place in the file allow: a
// write that starts and ends on a multiple of its size is taken in whole, large folios, where
// one that starts or ends elsewhere leaves small pages at both ends, and the kernel's work for
// each byte (the copy, the page lists, the writeback) grows. So a full buffer is written up to
// the last multiple of the alignment in it, and the piece of a line past that waits for the
// next write. Between writes a file can thus end part way through a line; every flush that is
// not for a full buffer (a checkpoint, the end, a quiet pipe) writes everything.
#pragma once

#include <cstddef>
#include <cstdint>

namespace keyshard {

/// The bytes from `file_size` to the next multiple of `alignment` (a power of two): a whole
/// `alignment` when the size is one.
inline size_t bytes_to_alignment(uint64_t file_size, size_t alignment) {
  return alignment - static_cast<size_t>(file_size & (alignment - 1));
}

/// How many of `buffered` bytes to write after the `file_size` the file has: up to the last
/// multiple of `alignment` among them, when that keeps back a little (up to a sixteenth of the
/// alignment: a line or so); otherwise all of them, rather than move much to the buffer's
/// front (after a long run of one partition's lines).
inline size_t aligned_write_size(uint64_t file_size, size_t buffered, size_t alignment) {
  const auto rest = static_cast<size_t>((file_size + buffered) & (alignment - 1));
  return rest < buffered && rest <= alignment / 16 ? buffered - rest : buffered;
}

}  // namespace keyshard
