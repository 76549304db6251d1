// Follows org.apache.kafka.common.utils.Utils.murmur2: little-endian 4-byte blocks, the tail
// folded in high byte first, then the final avalanche. All arithmetic is modulo 2^32, which is
// what Java's int overflow gives; unsigned types make that defined in C++.
#include "hash/murmur2.h"

#include <cstring>

namespace keyshard {

uint32_t kafka_murmur2(std::string_view key) {
  constexpr uint32_t kSeed = 0x9747b28c;
  constexpr uint32_t kM = 0x5bd1e995;
  constexpr int kR = 24;

  const auto* data = reinterpret_cast<const unsigned char*>(key.data());
  const size_t length = key.size();
  uint32_t h = kSeed ^ static_cast<uint32_t>(length);

  const size_t blocks = length / 4;
  for (size_t i = 0; i < blocks; ++i) {
    uint32_t k;
    std::memcpy(&k, data + i * 4, 4);  // Kafka reads blocks little-endian; so does x86.
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    k = __builtin_bswap32(k);
#endif
    k *= kM;
    k ^= k >> kR;
    k *= kM;
    h *= kM;
    h ^= k;
  }

  const unsigned char* tail = data + blocks * 4;
  switch (length % 4) {
    case 3:
      h ^= static_cast<uint32_t>(tail[2]) << 16;
      [[fallthrough]];
    case 2:
      h ^= static_cast<uint32_t>(tail[1]) << 8;
      [[fallthrough]];
    case 1:
      h ^= tail[0];
      h *= kM;
  }

  h ^= h >> 13;
  h *= kM;
  h ^= h >> 15;
  return h;
}

}  // namespace keyshard
