#include "input/line_index.h"

#include <algorithm>
#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace keyshard {
namespace {

#if defined(__AVX2__)
// Bit i set when block[i] is '\n', for the 64 bytes at `block`.
uint64_t newlines_in(const char* block) {
  const __m256i newline = _mm256_set1_epi8('\n');
  const auto* half = reinterpret_cast<const __m256i*>(block);
  const auto low = static_cast<uint32_t>(
      _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_loadu_si256(half), newline)));
  const auto high = static_cast<uint32_t>(
      _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_loadu_si256(half + 1), newline)));
  return (uint64_t{high} << 32) | low;
}
#endif

}  // namespace

size_t index_lines(const char* data, size_t size, std::vector<uint32_t>& starts,
                   size_t max_lines) {
  // Written through a raw pointer into room made ahead (one start per 64 bytes, growing when a
  // block of short lines needs more), so the loop has no per-line capacity check.
  starts.resize(std::min(size / 64, max_lines) + 128);
  uint32_t* out = starts.data();
  size_t room = starts.size();
  size_t count = 0;
  out[count++] = 0;
  auto make_room = [&] {
    if (count + 64 <= room) return;
    starts.resize(room * 2);
    out = starts.data();
    room = starts.size();
  };
  // Past max_lines lines (count - 1 newlines found): keep the first max_lines.
  auto stop_at_limit = [&] {
    starts.resize(max_lines + 1);
    return static_cast<size_t>(starts[max_lines]);
  };
  size_t i = 0;
#if defined(__AVX2__)
  for (; i + 64 <= size; i += 64) {
    uint64_t mask = newlines_in(data + i);
    if (mask == 0) continue;
    make_room();
    do {
      out[count++] = static_cast<uint32_t>(i + static_cast<size_t>(__builtin_ctzll(mask)) + 1);
      mask &= mask - 1;
    } while (mask != 0);
    if (count > max_lines) return stop_at_limit();
  }
#endif
  while (i < size) {
    const void* found = std::memchr(data + i, '\n', size - i);
    if (found == nullptr) break;
    i = static_cast<size_t>(static_cast<const char*>(found) - data) + 1;
    make_room();
    out[count++] = static_cast<uint32_t>(i);
    if (count > max_lines) return stop_at_limit();
  }
  // The entry after the last '\n' is the start of a line only if bytes follow it; otherwise it
  // is the final entry, `size`, already in place.
  if (out[count - 1] != size) {
    make_room();
    out[count++] = static_cast<uint32_t>(size);
  }
  starts.resize(count);
  return size;
}

void index_lines(const char* data, size_t size, std::vector<uint32_t>& starts) {
  (void)index_lines(data, size, starts, SIZE_MAX - 1);
}

void trim_line_index(std::vector<uint32_t>& starts, size_t size) {
  starts.resize(static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), size) -
                                    starts.begin()));
}

size_t end_of_lines(const char* data, size_t size, size_t lines) {
  if (lines == 0) return 0;
  size_t i = 0;
  size_t seen = 0;
#if defined(__AVX2__)
  for (; i + 64 <= size; i += 64) {
    uint64_t mask = newlines_in(data + i);
    const auto here = static_cast<size_t>(__builtin_popcountll(mask));
    if (seen + here < lines) {
      seen += here;
      continue;
    }
    for (; seen + 1 < lines; ++seen) mask &= mask - 1;  // drop the newlines before the one
    return i + static_cast<size_t>(__builtin_ctzll(mask)) + 1;
  }
#endif
  while (i < size) {
    const void* found = std::memchr(data + i, '\n', size - i);
    if (found == nullptr) break;
    i = static_cast<size_t>(static_cast<const char*>(found) - data) + 1;
    if (++seen == lines) return i;
  }
  return size;
}

}  // namespace keyshard
