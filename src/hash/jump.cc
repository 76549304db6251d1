#include "hash/jump.h"

namespace keyshard {

int32_t jump_consistent_hash(uint64_t key, int32_t buckets) {
  int64_t bucket = -1;
  int64_t next = 0;
  while (next < buckets) {
    bucket = next;
    key = key * 2862933555777941757ULL + 1;
    next = static_cast<int64_t>(static_cast<double>(bucket + 1) *
                                (static_cast<double>(1LL << 31) /
                                 static_cast<double>((key >> 33) + 1)));
  }
  return bucket < 0 ? 0 : static_cast<int32_t>(bucket);
}

}  // namespace keyshard
