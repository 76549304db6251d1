// The key sample keeps its promise: every key while there are at most `capacity`; past that,
// exactly the keys seen whose hash is below 2^(64 - level), never more than the capacity, with
// the flags the caller set; and its size times 2^level estimates the number of distinct keys.
#include "insight/key_sample.h"

#include <doctest/doctest.h>
#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

namespace keyshard {
namespace {

// Well-spread 64-bit hashes of the numbers 0, 1, 2, ...
uint64_t hash_of(uint64_t number) { return XXH3_64bits(&number, sizeof(number)); }

bool below_threshold(uint64_t hash, unsigned level) {
  return level == 0 || hash >> (64 - level) == 0;
}

TEST_CASE("every key is kept while there are at most `capacity`, each with its own flags") {
  KeySample sample(1000);
  for (int round = 0; round < 3; ++round) {  // each key seen three times, the rounds in order
    for (uint64_t n = 0; n < 1000; ++n) {
      bool first = true;
      uint8_t* flags = sample.note(hash_of(n), &first);
      REQUIRE(flags != nullptr);
      CHECK(first == (round == 0));
      if (first) {
        CHECK(*flags == 0);
        *flags = static_cast<uint8_t>(n % 64);
      } else {
        CHECK(*flags == n % 64);
      }
    }
  }
  CHECK(sample.level() == 0);
  CHECK(sample.size() == 1000);
  std::vector<uint8_t> flags = sample.flags();
  CHECK(flags.size() == 1000);
  std::vector<uint8_t> expected;
  for (uint64_t n = 0; n < 1000; ++n) expected.push_back(static_cast<uint8_t>(n % 64));
  std::sort(flags.begin(), flags.end());
  std::sort(expected.begin(), expected.end());
  CHECK(flags == expected);
}

TEST_CASE("past the capacity, the sample is exactly the keys below the threshold") {
  const size_t capacity = 4096;
  KeySample sample(capacity);
  std::vector<uint64_t> seen;
  for (uint64_t n = 0; n < 100'000; ++n) {
    const uint64_t hash = hash_of(n);
    seen.push_back(hash);
    bool first = false;
    if (uint8_t* flags = sample.note(hash, &first); flags != nullptr && first) {
      *flags = static_cast<uint8_t>(1 + (hash & 0x3f));  // a mark to find below
    }
    // A repeat of an earlier key now and then: never a second first event.
    if (n % 7 == 0) {
      const uint64_t again = seen[n / 2];
      bool first_again = true;
      uint8_t* flags = sample.note(again, &first_again);
      CHECK_FALSE(first_again);
      CHECK((flags != nullptr) == below_threshold(again, sample.level()));
    }
    REQUIRE(sample.size() <= capacity);
  }
  const unsigned level = sample.level();
  CHECK(level >= 4);  // 100,000 keys into 4,096: at least 1 in 16
  std::multiset<uint8_t> expected;
  for (const uint64_t hash : seen) {
    if (below_threshold(hash, level)) expected.insert(static_cast<uint8_t>(1 + (hash & 0x3f)));
  }
  CHECK(sample.size() == expected.size());
  CHECK(sample.size() >= capacity / 4);  // (halving twice in a row is rare; three times, rarer)
  const std::vector<uint8_t> flags = sample.flags();
  CHECK(std::multiset<uint8_t>(flags.begin(), flags.end()) == expected);
  // The estimate of the distinct keys: within 5% here (the standard error is about 1.6%).
  const double estimate = std::ldexp(static_cast<double>(sample.size()), static_cast<int>(level));
  CHECK(std::fabs(estimate - 100'000) < 5'000);
}

TEST_CASE("a full sample whose keys all share the top bits still makes room") {
  // Hashes with the top 40 bits zero: 40 levels go up at once before any key leaves.
  KeySample sample(8);
  for (uint64_t n = 0; n < 100; ++n) {
    bool first = false;
    (void)sample.note(n << 3, &first);
    REQUIRE(sample.size() <= 8);
  }
  CHECK(sample.level() > 40);
  CHECK(sample.size() >= 1);
  // Only the hash 0 is in a sample of level 64; any other is left out without a loop.
  KeySample tiny(2);
  bool first = false;
  CHECK(tiny.note(0, &first) != nullptr);
  CHECK(tiny.note(1, &first) != nullptr);
  CHECK(tiny.note(2, &first) == nullptr);  // full: up to level 64, where only 0 stays
  CHECK(tiny.level() == 64);
  CHECK(tiny.size() == 1);
  CHECK(tiny.note(0, &first) != nullptr);
  CHECK_FALSE(first);
  CHECK(tiny.note(1, &first) == nullptr);
}

TEST_CASE("the table's memory is bounded by the capacity, not by the keys seen") {
  KeySample sample(1024);
  for (uint64_t n = 0; n < 200'000; ++n) {
    bool first = false;
    (void)sample.note(hash_of(n), &first);
  }
  CHECK(sample.memory_bytes() <= 2 * 1024 * 16);
}

}  // namespace
}  // namespace keyshard
