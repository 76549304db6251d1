#include "input/line_index.h"

#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace keyshard {

void index_lines(const char* data, size_t size, std::vector<uint32_t>& starts) {
  starts.clear();
  if (size == 0) {
    starts.push_back(0);
    return;
  }
  starts.push_back(0);
  size_t i = 0;
#if defined(__AVX2__)
  const __m256i newline = _mm256_set1_epi8('\n');
  for (; i + 32 <= size; i += 32) {
    const __m256i block = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i));
    auto mask = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(block, newline)));
    while (mask != 0) {
      starts.push_back(static_cast<uint32_t>(i + static_cast<size_t>(__builtin_ctz(mask)) + 1));
      mask &= mask - 1;
    }
  }
#endif
  for (;;) {
    const void* found = std::memchr(data + i, '\n', size - i);
    if (found == nullptr) break;
    i = static_cast<size_t>(static_cast<const char*>(found) - data) + 1;
    starts.push_back(static_cast<uint32_t>(i));
  }
  // The entry after the last '\n' is the start of a line only if bytes follow it; otherwise it
  // is the final entry, `size`, already in place.
  if (starts.back() != size) starts.push_back(static_cast<uint32_t>(size));
}

}  // namespace keyshard
