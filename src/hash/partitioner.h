// The six partitioners of keyshard, each an exact formula over the key bytes (see the man page,
// PARTITIONERS). A Partitioner is a small value: the routers copy it and call it per line.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace keyshard {

enum class HashKind { kMurmur2, kCrc32, kFnv1a, kMd5, kXxh3, kJump };

/// Canonical name of a partitioner ("murmur2", "crc32", ...).
std::string_view hash_name(HashKind kind);

/// Parses a --hash value, accepting the aliases "kafka" (murmur2) and "consistent" (crc32).
std::optional<HashKind> parse_hash_name(std::string_view name);

/// Every accepted --hash spelling, canonical names first; for help text and "did you mean".
std::span<const std::string_view> hash_spellings();

class Partitioner {
 public:
  Partitioner(HashKind kind, uint32_t partitions) : kind_(kind), partitions_(partitions) {}

  /// The partition in [0, partitions) of the given key bytes.
  uint32_t partition_of(std::string_view key) const;

  HashKind kind() const { return kind_; }
  uint32_t partitions() const { return partitions_; }

 private:
  HashKind kind_;
  uint32_t partitions_;
};

/// The bytes of sub-key `index` of a salted key: the key, the byte 0x1E, then `index` in decimal.
void salted_key(std::string_view key, uint32_t index, std::string& out);

/// The sub-key --salt-by picks for a salted event: XXH3-64 of the field's bytes `by`, modulo
/// `sub_keys`.
uint32_t sub_key_of_field(std::string_view by, uint32_t sub_keys);

/// int(md5(key).hexdigest(), 16) % partitions: the whole digest read as a big-endian integer.
uint32_t md5_partition(std::string_view key, uint32_t partitions);

}  // namespace keyshard
