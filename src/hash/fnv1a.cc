#include "hash/fnv1a.h"

namespace keyshard {

uint32_t librdkafka_fnv1a(std::string_view key) {
  constexpr uint32_t kPrime = 0x01000193;
  constexpr uint32_t kOffset = 0x811c9dc5;
  uint32_t h = kOffset;
  for (unsigned char byte : key) {
    h ^= byte;
    h *= kPrime;
  }
  // librdkafka negates a negative int32; INT32_MIN stays INT32_MIN (two's complement wrap).
  if (h & 0x80000000u) h = ~h + 1;
  return h;
}

}  // namespace keyshard
