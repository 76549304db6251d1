// Kafka's murmur2: the Java client's variant of MurmurHash2 (seed 0x9747b28c), hand-written
// because no packaged library reproduces it bit for bit. Kafka's default partitioner is
// (murmur2(key) & 0x7fffffff) % N.
#pragma once

#include <cstdint>
#include <string_view>

namespace keyshard {

/// Kafka's murmur2 of `key`, as the unsigned bits of the Java int it returns.
uint32_t kafka_murmur2(std::string_view key);

}  // namespace keyshard
