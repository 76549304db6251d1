// Pins every partitioner to values that come from outside this code: Kafka's and librdkafka's
// published vectors, librdkafka's own partitioner functions and Python's hashlib (committed as
// tests/data/*.tsv, see tests/data/README.md), and direct calls into the hashing libraries.
#include "hash/partitioner.h"

#include <doctest/doctest.h>
#include <xxhash.h>
#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "hash/fnv1a.h"
#include "hash/jump.h"
#include "hash/murmur2.h"

namespace keyshard {
namespace {

// The partition counts every reference file covers.
const std::set<uint32_t> kReferenceCounts{1, 2, 3, 7, 8, 12, 16, 100, 1024, 4096};
constexpr size_t kMinReferenceKeys = 1000;

std::optional<std::string> decode_hex(std::string_view hex) {
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string bytes;
  bytes.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int high = digit(hex[i]);
    const int low = digit(hex[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    bytes.push_back(static_cast<char>(high * 16 + low));
  }
  return bytes;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path, std::ios::binary);
  INFO("cannot open ", path, " (unit tests run with the working directory set to tests/)");
  CHECK(in.is_open());
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> fields;
  for (size_t start = 0;;) {
    const size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string_view::npos ? tab : tab - start));
    if (tab == std::string_view::npos) return fields;
    start = tab + 1;
  }
}

std::optional<uint32_t> parse_count(std::string_view text) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(value);
}

// One line of a reference TSV: hex key, N, then one expected partition per partitioner.
struct ReferenceRow {
  std::string hex_key;
  std::string key;
  uint32_t partitions = 0;
  std::vector<uint32_t> expected;
};

// Reads a reference TSV with `columns` partition columns after the key and N. A malformed line
// fails the calling test case (with its line number) and is left out.
std::vector<ReferenceRow> read_reference(const std::string& path, size_t columns) {
  std::vector<ReferenceRow> rows;
  size_t line_number = 0;
  for (const auto& line : read_lines(path)) {
    ++line_number;
    INFO(path, ":", line_number, ": ", line);
    const auto fields = split_tabs(line);
    REQUIRE(fields.size() == columns + 2);
    ReferenceRow row;
    row.hex_key = std::string(fields[0]);
    const auto key = decode_hex(fields[0]);
    const auto partitions = parse_count(fields[1]);
    REQUIRE(key.has_value());
    REQUIRE(partitions.has_value());
    row.key = *key;
    row.partitions = *partitions;
    for (size_t column = 0; column < columns; ++column) {
      const auto expected = parse_count(fields[2 + column]);
      REQUIRE(expected.has_value());
      row.expected.push_back(*expected);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// The reference keys themselves, decoded (the empty line is the empty key).
std::vector<std::string> reference_keys() {
  std::vector<std::string> keys;
  for (const auto& line : read_lines("data/reference_keys.hex")) {
    const auto key = decode_hex(line);
    INFO("data/reference_keys.hex: ", line);
    REQUIRE(key.has_value());
    keys.push_back(*key);
  }
  return keys;
}

// A reference file must cover every reference key at every N, so a truncated file fails.
void check_covers_reference_keys(const std::vector<ReferenceRow>& rows) {
  const auto keys = reference_keys();
  CHECK(keys.size() >= kMinReferenceKeys);
  CHECK(rows.size() == keys.size() * kReferenceCounts.size());
  std::set<uint32_t> counts;
  for (const auto& row : rows) counts.insert(row.partitions);
  CHECK(counts == kReferenceCounts);
}

// Deterministic keys for the statistical tests: "prefix0", "prefix1", ...
std::vector<std::string> numbered_keys(std::string_view prefix, size_t count) {
  std::vector<std::string> keys;
  keys.reserve(count);
  for (size_t i = 0; i < count; ++i) keys.push_back(std::string(prefix) + std::to_string(i));
  return keys;
}

constexpr HashKind kAllKinds[] = {HashKind::kMurmur2, HashKind::kCrc32, HashKind::kFnv1a,
                                  HashKind::kMd5,     HashKind::kXxh3,  HashKind::kJump};

}  // namespace

TEST_CASE("murmur2 matches Kafka's published UtilsTest vectors") {
  // org.apache.kafka.common.utils.UtilsTest.testMurmur2, compared as Java ints.
  struct Vector {
    std::string_view key;
    int32_t hash;
  };
  const Vector vectors[] = {
      {"21", -973932308},
      {"foobar", -790332482},
      {"a-little-bit-long-string", -985981536},
      {"a-little-bit-longer-string", -1486304829},
      {"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
      {"abc", 479470107},
  };
  for (const auto& vector : vectors) {
    CAPTURE(vector.key);
    CHECK(static_cast<int32_t>(kafka_murmur2(vector.key)) == vector.hash);
  }
}

TEST_CASE("fnv1a matches the vectors librdkafka publishes for Sarama compatibility") {
  // librdkafka's unittest_fnv1a(), whose values come from Go's hash/fnv plus Sarama's abs().
  struct Vector {
    std::string_view key;
    uint32_t hash;
  };
  const Vector vectors[] = {
      {"kafka", 0x0d33c4e1},     {"giberish123456789", 0x77a58295},
      {"1234", 0x023bdd03},      {"234", 0x2dea3cd2},
      {"34", 0x740fa83e},        {"4", 0x310ca263},
      {"", 0x7ee3623b},          {"PreAmbleWillBeRemoved,ThePrePartThatIs", 0x65cbd69c},
      {"reAmbleWillBeRemoved,ThePrePartThatIs", 0x6e49c79a},
      {"eAmbleWillBeRemoved,ThePrePartThatIs", 0x69eed356},
      {"AmbleWillBeRemoved,ThePrePartThatIs", 0x6abcc023},
  };
  for (const auto& vector : vectors) {
    CAPTURE(vector.key);
    CHECK(librdkafka_fnv1a(vector.key) == vector.hash);
  }
}

TEST_CASE("crc32 is the IEEE CRC-32 of the published check value") {
  // The standard CRC-32 check: "123456789" -> 0xCBF43926. With N = 2^32-1 the partition is the
  // hash itself (it is below N).
  CHECK(Partitioner(HashKind::kCrc32, UINT32_MAX).partition_of("123456789") == 0xCBF43926u);
  CHECK(Partitioner(HashKind::kCrc32, UINT32_MAX).partition_of("") == 0u);
}

TEST_CASE("jump hash matches the published vectors") {
  struct Vector {
    uint64_t key;
    int32_t buckets;
    int32_t bucket;
  };
  const Vector vectors[] = {
      {1, 1, 0}, {42, 57, 43}, {0xDEAD10CC, 1, 0}, {0xDEAD10CC, 666, 361}, {256, 1024, 520},
  };
  for (const auto& vector : vectors) {
    CAPTURE(vector.key);
    CAPTURE(vector.buckets);
    CHECK(jump_consistent_hash(vector.key, vector.buckets) == vector.bucket);
  }
}

TEST_CASE("murmur2/crc32/fnv1a partitions equal librdkafka's for every reference key") {
  const auto rows = read_reference("data/librdkafka_partitions.tsv", 3);
  check_covers_reference_keys(rows);
  for (const auto& row : rows) {
    INFO("key hex '", row.hex_key, "' N ", row.partitions);
    CHECK(Partitioner(HashKind::kMurmur2, row.partitions).partition_of(row.key) ==
          row.expected[0]);
    CHECK(Partitioner(HashKind::kCrc32, row.partitions).partition_of(row.key) == row.expected[1]);
    CHECK(Partitioner(HashKind::kFnv1a, row.partitions).partition_of(row.key) == row.expected[2]);
  }
}

TEST_CASE("md5 partitions equal Python hashlib's for every reference key") {
  const auto rows = read_reference("data/md5_partitions.tsv", 1);
  check_covers_reference_keys(rows);
  for (const auto& row : rows) {
    INFO("key hex '", row.hex_key, "' N ", row.partitions);
    CHECK(Partitioner(HashKind::kMd5, row.partitions).partition_of(row.key) == row.expected[0]);
  }
}

TEST_CASE("md5 stays exact for the largest partition counts") {
  // int(hashlib.md5(key).hexdigest(), 16) % N, computed with Python for N near 2^32, where an
  // intermediate overflow in the 128-bit reduction would show.
  struct Vector {
    std::string key;
    uint32_t partitions;
    uint32_t partition;
  };
  const Vector vectors[] = {
      {"", 4294967295u, 966167286u},
      {"", 4294967291u, 100113718u},
      {"", 2147483647u, 484934813u},
      {"user_1", 4294967295u, 1250243693u},
      {"user_1", 65537u, 59881u},
      {std::string(16, '\xff'), 4294967291u, 4041480747u},
      {std::string(16, '\xff'), 2147483647u, 131468561u},
  };
  for (const auto& vector : vectors) {
    CAPTURE(vector.key);
    CAPTURE(vector.partitions);
    CHECK(md5_partition(vector.key, vector.partitions) == vector.partition);
    CHECK(Partitioner(HashKind::kMd5, vector.partitions).partition_of(vector.key) ==
          vector.partition);
  }
}

TEST_CASE("xxh3 is XXH3_64bits modulo N") {
  const auto keys = reference_keys();
  REQUIRE(keys.size() >= kMinReferenceKeys);
  for (const uint32_t partitions : {1u, 2u, 3u, 7u, 8u, 12u, 100u, 4096u, 65537u, UINT32_MAX}) {
    for (const auto& key : keys) {
      const uint64_t hash = XXH3_64bits(key.data(), key.size());
      INFO("key size ", key.size(), " N ", partitions);
      CHECK(Partitioner(HashKind::kXxh3, partitions).partition_of(key) == hash % partitions);
    }
  }
}

TEST_CASE("jump is jump_consistent_hash of XXH3_64bits") {
  const auto keys = reference_keys();
  REQUIRE(keys.size() >= kMinReferenceKeys);
  for (const uint32_t partitions : {1u, 2u, 3u, 7u, 8u, 12u, 100u, 4096u, 100000u}) {
    for (const auto& key : keys) {
      const uint64_t hash = XXH3_64bits(key.data(), key.size());
      const auto expected = jump_consistent_hash(hash, static_cast<int32_t>(partitions));
      INFO("key size ", key.size(), " N ", partitions);
      CHECK(Partitioner(HashKind::kJump, partitions).partition_of(key) ==
            static_cast<uint32_t>(expected));
    }
  }
}

TEST_CASE("jump moves about 1/(N+1) of keys when growing N, and only into the new partition") {
  const auto keys = numbered_keys("jump-key-", 50000);
  for (const uint32_t partitions : {1u, 2u, 3u, 4u, 5u, 7u, 8u, 10u, 12u, 16u, 31u, 64u, 100u}) {
    const Partitioner before(HashKind::kJump, partitions);
    const Partitioner after(HashKind::kJump, partitions + 1);
    size_t moved = 0;
    size_t moved_elsewhere = 0;
    for (const auto& key : keys) {
      const uint32_t old_partition = before.partition_of(key);
      const uint32_t new_partition = after.partition_of(key);
      if (old_partition == new_partition) continue;
      ++moved;
      if (new_partition != partitions) ++moved_elsewhere;
    }
    // Each key moves with probability p = 1/(N+1): allow 5 standard deviations.
    const double p = 1.0 / (partitions + 1.0);
    const double expected = static_cast<double>(keys.size()) * p;
    const double tolerance = 5.0 * std::sqrt(expected * (1.0 - p)) + 1.0;
    CAPTURE(partitions);
    CAPTURE(moved);
    CAPTURE(expected);
    CHECK(moved_elsewhere == 0);
    CHECK(std::abs(static_cast<double>(moved) - expected) <= tolerance);
  }
}

TEST_CASE("parse_hash_name accepts canonical names and the kafka/consistent aliases and rejects "
          "others") {
  CHECK(parse_hash_name("murmur2") == HashKind::kMurmur2);
  CHECK(parse_hash_name("crc32") == HashKind::kCrc32);
  CHECK(parse_hash_name("fnv1a") == HashKind::kFnv1a);
  CHECK(parse_hash_name("md5") == HashKind::kMd5);
  CHECK(parse_hash_name("xxh3") == HashKind::kXxh3);
  CHECK(parse_hash_name("jump") == HashKind::kJump);
  CHECK(parse_hash_name("kafka") == HashKind::kMurmur2);
  CHECK(parse_hash_name("consistent") == HashKind::kCrc32);

  for (const std::string_view rejected :
       {"", "MURMUR2", "Kafka", "murmur", "murmur3", "crc", "crc32c", "fnv", "fnv1", "md4", "xxh64",
        "xxhash", "jump ", " md5", "random", "consistent_random", "murmur2_random"}) {
    CAPTURE(rejected);
    CHECK_FALSE(parse_hash_name(rejected).has_value());
  }
  CHECK_FALSE(parse_hash_name(std::string_view("md5\0", 4)).has_value());

  for (const HashKind kind : kAllKinds) CHECK(parse_hash_name(hash_name(kind)) == kind);
  const auto spellings = hash_spellings();
  CHECK(spellings.size() == 8);
  for (const auto spelling : spellings) {
    CAPTURE(spelling);
    CHECK(parse_hash_name(spelling).has_value());
  }
}

TEST_CASE("partition_of is always below N for N = 1 .. 50") {
  const auto keys = reference_keys();
  REQUIRE(keys.size() >= kMinReferenceKeys);
  for (const HashKind kind : kAllKinds) {
    for (uint32_t partitions = 1; partitions <= 50; ++partitions) {
      const Partitioner partitioner(kind, partitions);
      size_t out_of_range = 0;
      for (const auto& key : keys) {
        if (partitioner.partition_of(key) >= partitions) ++out_of_range;
      }
      CAPTURE(hash_name(kind));
      CAPTURE(partitions);
      CHECK(out_of_range == 0);
    }
  }
}

}  // namespace keyshard
