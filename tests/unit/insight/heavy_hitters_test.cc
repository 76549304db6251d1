// The heavy-hitter summary keeps its promise: every key above N/(m+1) is found, every reported
// count is within N/(m+1) below the truth, on Zipf data and on adversarial orders, and its memory
// does not grow with the number of distinct keys.
#include "insight/heavy_hitters.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace keyshard {
namespace {

// Built with append: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
std::string named(const char* prefix, uint64_t number) {
  std::string name = prefix;
  name += std::to_string(number);
  return name;
}

class Stream {
 public:
  void add(const std::string& key, HeavyHitters& summary) {
    ++truth_[key];
    summary.add(key, HeavyHitters::key_hash(key));
  }
  const std::map<std::string, uint64_t>& truth() const { return truth_; }

 private:
  std::map<std::string, uint64_t> truth_;
};

// The guarantee, checked key by key.
void check_bounds(const HeavyHitters& summary, const std::map<std::string, uint64_t>& truth) {
  const uint64_t bound = summary.error_bound();
  std::map<std::string, uint64_t> reported;
  for (const auto& entry : summary.top(SIZE_MAX)) reported[entry.key] = entry.count;
  for (const auto& entry : truth) {
    const std::string& key = entry.first;  // (clang 14 cannot capture a structured binding)
    const uint64_t count = entry.second;
    CAPTURE(key);
    CAPTURE(count);
    CAPTURE(bound);
    const auto found = reported.find(key);
    if (count > bound) REQUIRE(found != reported.end());
    if (found != reported.end()) {
      CHECK(found->second <= count);
      CHECK(found->second + bound >= count);
    }
  }
}

uint64_t next_random(uint64_t& state) {
  state += 0x9e3779b97f4a7c15ull;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Zipf(s) over `keys` ranks by inverting a precomputed CDF.
std::vector<std::string> zipf_stream(size_t events, size_t keys, double s, uint64_t seed) {
  std::vector<double> cdf(keys);
  double sum = 0;
  for (size_t rank = 0; rank < keys; ++rank) cdf[rank] = sum += 1.0 / std::pow(rank + 1.0, s);
  std::vector<std::string> stream;
  for (size_t i = 0; i < events; ++i) {
    const double u = static_cast<double>(next_random(seed) >> 11) / 9007199254740992.0 * sum;
    const auto rank = static_cast<size_t>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
    stream.push_back(named("user_", rank));
  }
  return stream;
}

}  // namespace

TEST_CASE("the summary finds every key above N/(m+1) on Zipf data, within the bound") {
  for (double s : {0.8, 1.1, 1.5}) {
    CAPTURE(s);
    HeavyHitters summary(64);
    Stream stream;
    for (const auto& key : zipf_stream(200000, 50000, s, 7)) stream.add(key, summary);
    CHECK(summary.total() == 200000);
    check_bounds(summary, stream.truth());
  }
}

TEST_CASE("a hot key that arrives only at the end is still found") {
  HeavyHitters summary(32);
  Stream stream;
  for (int i = 0; i < 100000; ++i) stream.add(named("cold_", static_cast<uint64_t>(i)), summary);
  for (int i = 0; i < 20000; ++i) stream.add("celebrity", summary);
  check_bounds(summary, stream.truth());
  const auto top = summary.top(1);
  REQUIRE(top.size() == 1);
  CHECK(top[0].key == "celebrity");
}

TEST_CASE("many ties and interleaved heavy keys keep the bound") {
  HeavyHitters summary(16);
  Stream stream;
  for (int round = 0; round < 2000; ++round) {
    for (int k = 0; k < 40; ++k) stream.add(named("tie_", static_cast<uint64_t>(k)), summary);
    if (round % 2 == 0) stream.add("heavy_a", summary);
    stream.add("heavy_b", summary);
  }
  check_bounds(summary, stream.truth());
}

TEST_CASE("merged summaries keep the bound over the whole stream") {
  HeavyHitters left(64), right(64), whole(64);
  Stream stream;
  const auto events = zipf_stream(100000, 20000, 1.1, 3);
  for (size_t i = 0; i < events.size(); ++i) {
    stream.add(events[i], whole);
    (i % 3 == 0 ? left : right).add(events[i], HeavyHitters::key_hash(events[i]));
  }
  left.merge(right);
  CHECK(left.total() == events.size());
  check_bounds(left, stream.truth());
}

TEST_CASE("a summary recorded part-way and restored goes on exactly as the original") {
  const auto events = zipf_stream(60000, 5000, 1.1, 5);
  HeavyHitters original(32), first_half(32);
  for (size_t i = 0; i < events.size(); ++i) {
    const uint64_t hash = HeavyHitters::key_hash(events[i]);
    original.add(events[i], hash);
    if (i < events.size() / 2) first_half.add(events[i], hash);
  }
  HeavyHitters restored(32);
  restored.restore(first_half.counters(), first_half.total());
  CHECK(restored.counters().size() == first_half.counters().size());
  for (size_t i = events.size() / 2; i < events.size(); ++i) {
    restored.add(events[i], HeavyHitters::key_hash(events[i]));
  }
  CHECK(restored.total() == original.total());
  const auto want = original.top(SIZE_MAX), got = restored.top(SIZE_MAX);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    CHECK(got[i].key == want[i].key);
    CHECK(got[i].count == want[i].count);
  }
}

TEST_CASE("a summary settled interval by interval keeps the bound over the whole stream") {
  // As a run with checkpoints does it: each interval has its own summary per router, merged
  // into the settled one at each checkpoint.
  const auto events = zipf_stream(120000, 30000, 1.0, 9);
  HeavyHitters settled(64);
  Stream stream;
  for (size_t from = 0; from < events.size(); from += 6000) {
    HeavyHitters even(64), odd(64);
    for (size_t i = from; i < from + 6000 && i < events.size(); ++i) {
      HeavyHitters& router = (i / 100) % 2 == 0 ? even : odd;
      stream.add(events[i], router);
    }
    settled.merge(even);
    settled.merge(odd);
  }
  CHECK(settled.total() == events.size());
  check_bounds(settled, stream.truth());
}

TEST_CASE("memory stays fixed with 10 million distinct keys") {
  HeavyHitters summary(1024);
  const size_t before = summary.memory_bytes();
  std::string key;
  for (uint64_t i = 0; i < 10000000; ++i) {
    key = named("k", i);
    summary.add(key, HeavyHitters::key_hash(key));
    if (i % 1000 == 0) summary.add("hot", HeavyHitters::key_hash("hot"), 20);
  }
  CHECK(summary.memory_bytes() == before);
  // Per counter: its key's 256 bytes and length, its index on the free list, and the slots
  // (twice as many as counters, plus a sweep's scratch copy) of 24 bytes each.
  CHECK(summary.memory_bytes() >= 1024 * (256 + 4 + 4 + 3 * 24));
  CHECK(summary.memory_bytes() < 1024 * 400);
  CHECK(summary.top(1).at(0).key == "hot");
}

TEST_CASE("keys of every length up to the cut are kept byte for byte") {
  // Short keys are copied in pieces that overlap; every length must come out whole.
  for (size_t length = 0; length <= HeavyHitters::kKeyBytes + 1; ++length) {
    CAPTURE(length);
    std::string key(length, '\0');
    for (size_t i = 0; i < length; ++i) key[i] = static_cast<char>('a' + (i * 7 + length) % 26);
    HeavyHitters summary(4);
    summary.add("other", HeavyHitters::key_hash("other"));
    summary.add(key, HeavyHitters::key_hash(key), 3);
    const auto top = summary.top(1);
    REQUIRE(top.size() == 1);
    CHECK(top[0].key == key.substr(0, HeavyHitters::kKeyBytes));
    CHECK(top[0].truncated == (length > HeavyHitters::kKeyBytes));
    const auto counters = summary.counters();
    CHECK(std::any_of(counters.begin(), counters.end(), [&](const HeavyHitters::Counter& c) {
      return c.key == top[0].key && c.length == length;
    }));
  }
}

TEST_CASE("long keys are reported cut, and marked") {
  HeavyHitters summary(4);
  const std::string longer(300, 'x');
  summary.add(longer, HeavyHitters::key_hash(longer), 5);
  const auto top = summary.top(1);
  REQUIRE(top.size() == 1);
  CHECK(top[0].key == std::string(HeavyHitters::kKeyBytes, 'x'));
  CHECK(top[0].truncated);
  CHECK(top[0].count == 5);
}

TEST_CASE("a key cut inside a character is shown as text up to the last whole one") {
  HeavyHitters summary(4);
  std::string key = "a";
  for (int i = 0; i < 200; ++i) key += "\xc3\xa9";  // é: the cut at 256 bytes splits one
  summary.add(key, HeavyHitters::key_hash(key), 5);
  const auto top = summary.top(1);
  REQUIRE(top.size() == 1);
  CHECK(top[0].truncated);
  const std::string shown = HeavyHitters::display(top[0]);
  std::string want = "\"";
  want.append(key, 0, 255);
  want += "\"...";
  CHECK(shown == want);
  std::string json;  // likewise in JSON: a "key", not a "key_base64"
  HeavyHitters::append_json_key(json, top[0]);
  CHECK(json == "\"key\": " + want.substr(0, want.size() - 3));
  // A key that is not UTF-8 at all is still shown in base64.
  HeavyHitters other(4);
  const std::string binary(300, '\xff');
  other.add(binary, HeavyHitters::key_hash(binary), 5);
  CHECK(HeavyHitters::display(other.top(1)[0]).starts_with("base64:"));
}

TEST_CASE("the bound is 0 while no count was cancelled, and at most N/(m+1)") {
  HeavyHitters summary(16);
  Stream stream;
  for (int i = 0; i < 1000; ++i) stream.add(named("k", i % 16), summary);
  CHECK(summary.error_bound() == 0);
  CHECK(summary.accuracy("0") == "counts exact");
  check_bounds(summary, stream.truth());
  HeavyHitters other(16);
  for (int i = 0; i < 500; ++i) {
    other.add(named("k", i % 16), HeavyHitters::key_hash(named("k", i % 16)));
  }
  summary.merge(other);  // the same 16 keys: nothing cancelled
  CHECK(summary.error_bound() == 0);
  for (const std::string& key : zipf_stream(20000, 3000, 1.1, 9)) stream.add(key, summary);
  CHECK(summary.error_bound() > 0);
  CHECK(summary.error_bound() <= summary.total() / 17);
  check_bounds(summary, stream.truth());
}

TEST_CASE("a restore into fewer counters keeps the heaviest keys, within the bound") {
  // 63 keys of 10 events and one of 1,000, recorded by a summary of 64 counters, restored into
  // one of 16: the heavy key stays whatever its hash, and every count keeps the guarantee.
  HeavyHitters wide(64);
  Stream stream;
  for (int round = 0; round < 10; ++round) {
    for (int i = 0; i < 63; ++i) stream.add(named("k", i), wide);
  }
  for (int i = 0; i < 1000; ++i) stream.add("heavy", wide);
  CHECK(wide.error_bound() == 0);
  HeavyHitters narrow(16);
  narrow.restore(wide.counters(), wide.total());
  CHECK(narrow.counters().size() <= 16);
  CHECK(narrow.top(1)[0].key == "heavy");
  CHECK(narrow.error_bound() > 0);
  check_bounds(narrow, stream.truth());
  HeavyHitters counts_only(16);
  counts_only.restore(wide.counts(), wide.total());
  CHECK(counts_only.count_of(HeavyHitters::key_hash("heavy")) + counts_only.error_bound() >= 1000);
}

}  // namespace keyshard
