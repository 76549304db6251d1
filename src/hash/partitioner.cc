// Library-backed partitioners (zlib CRC-32, libmd MD5, xxHash XXH3) and dispatch to the
// hand-written ones (Kafka murmur2, librdkafka fnv1a, jump hash).
#include "hash/partitioner.h"

#include <md5.h>
#include <xxhash.h>
#include <zlib.h>

#include <array>

#include "hash/fnv1a.h"
#include "hash/jump.h"
#include "hash/murmur2.h"

namespace keyshard {
namespace {

struct Spelling {
  std::string_view name;
  HashKind kind;
};

constexpr std::array<Spelling, 8> kSpellings{{
    {"murmur2", HashKind::kMurmur2},
    {"crc32", HashKind::kCrc32},
    {"fnv1a", HashKind::kFnv1a},
    {"md5", HashKind::kMd5},
    {"xxh3", HashKind::kXxh3},
    {"jump", HashKind::kJump},
    {"kafka", HashKind::kMurmur2},
    {"consistent", HashKind::kCrc32},
}};

constexpr std::array<std::string_view, 8> kSpellingNames{
    "murmur2", "crc32", "fnv1a", "md5", "xxh3", "jump", "kafka", "consistent"};

uint32_t crc32_ieee(std::string_view key) {
  // zlib's crc32() takes a uInt length; feed very long keys in pieces.
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* data = reinterpret_cast<const Bytef*>(key.data());
  size_t left = key.size();
  while (left > 0) {
    const uInt piece = left > (1u << 30) ? (1u << 30) : static_cast<uInt>(left);
    crc = crc32(crc, data, piece);
    data += piece;
    left -= piece;
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace

std::string_view hash_name(HashKind kind) {
  for (const auto& spelling : kSpellings) {
    if (spelling.kind == kind) return spelling.name;
  }
  return "?";
}

std::optional<HashKind> parse_hash_name(std::string_view name) {
  for (const auto& spelling : kSpellings) {
    if (spelling.name == name) return spelling.kind;
  }
  return std::nullopt;
}

std::span<const std::string_view> hash_spellings() { return kSpellingNames; }

void salted_key(std::string_view key, uint32_t index, std::string& out) {
  out.assign(key);
  out.push_back('\x1e');
  out += std::to_string(index);
}

uint32_t sub_key_of_field(std::string_view by, uint32_t sub_keys) {
  return static_cast<uint32_t>(XXH3_64bits(by.data(), by.size()) % sub_keys);
}

uint32_t md5_partition(std::string_view key, uint32_t partitions) {
  MD5_CTX context;
  MD5Init(&context);
  MD5Update(&context, reinterpret_cast<const uint8_t*>(key.data()), key.size());
  uint8_t digest[MD5_DIGEST_LENGTH];
  MD5Final(digest, &context);
  // Horner's rule over the big-endian bytes keeps the remainder below 2^40: no overflow.
  uint64_t remainder = 0;
  for (uint8_t byte : digest) remainder = ((remainder << 8) | byte) % partitions;
  return static_cast<uint32_t>(remainder);
}

uint32_t Partitioner::partition_of(std::string_view key) const {
  switch (kind_) {
    case HashKind::kMurmur2:
      return (kafka_murmur2(key) & 0x7fffffffu) % partitions_;
    case HashKind::kCrc32:
      return crc32_ieee(key) % partitions_;
    case HashKind::kFnv1a:
      return librdkafka_fnv1a(key) % partitions_;
    case HashKind::kMd5:
      return md5_partition(key, partitions_);
    case HashKind::kXxh3:
      return static_cast<uint32_t>(XXH3_64bits(key.data(), key.size()) % partitions_);
    case HashKind::kJump:
      return static_cast<uint32_t>(jump_consistent_hash(
          XXH3_64bits(key.data(), key.size()), static_cast<int32_t>(partitions_)));
  }
  return 0;
}

}  // namespace keyshard
