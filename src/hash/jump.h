// Jump Consistent Hash (Lamping & Veach, 2014): maps a 64-bit key to one of N buckets so that
// growing N to N+1 moves only ~1/(N+1) of the keys. Hand-written from the paper's algorithm.
#pragma once

#include <cstdint>

namespace keyshard {

/// The bucket in [0, buckets) of `key`. For buckets <= 0 (never asked by keyshard) it returns 0
/// where the paper's code would return -1.
int32_t jump_consistent_hash(uint64_t key, int32_t buckets);

}  // namespace keyshard
