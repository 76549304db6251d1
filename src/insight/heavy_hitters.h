// The heaviest keys of a run, in bounded memory: the Misra-Gries summary (1982) with m counters.
// Every key whose true count exceeds N/(m+1) (N = events seen) is in the summary, and each
// reported count is at most N/(m+1) below the true one. A key is identified by a 64-bit hash of
// its bytes; the first 256 bytes are kept for the report. Each router keeps its own summary;
// summaries merge (Agarwal et al. 2012) with the same bound over the merged N.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace keyshard {

/// The counters of the summaries a run keeps (the man page's m).
inline constexpr size_t kHeavyHitterCounters = 256;

class HeavyHitters {
 public:
  static constexpr size_t kKeyBytes = 256;  // bytes of each key kept for the report

  explicit HeavyHitters(size_t counters = 1024);

  /// Counts one event of `key`; `hash` is a 64-bit hash of its bytes (see key_hash()).
  void add(std::string_view key, uint64_t hash, uint64_t weight = 1);

  /// Adds another summary into this one (same number of counters).
  void merge(const HeavyHitters& other);

  struct Entry {
    std::string key;       // the first kKeyBytes bytes
    bool truncated;        // the key was longer
    uint64_t count;        // a lower bound of the true count, at most error_bound() below it
  };
  /// The `limit` heaviest keys, heaviest first (ties by key).
  std::vector<Entry> top(size_t limit) const;

  /// The key as a terminal should show it: a JSON string, or base64 when not UTF-8; "..." when
  /// cut.
  static std::string display(const Entry& entry);
  /// Appends `"key": ...` (or `"key_base64": ...` when not UTF-8) to a JSON object being built.
  static void append_json_key(std::string& out, const Entry& entry);

  uint64_t total() const { return total_; }
  /// The count of the key with this hash (0 when it is not in the summary).
  uint64_t count_of(uint64_t hash) const;
  /// How far below the true count any reported count may be: (N - C) / (m + 1), C being the
  /// sum of the counts (0 while no count was cancelled: with at most m keys, say), and at
  /// most N / (m + 1).
  uint64_t error_bound() const;
  /// What the reported counts are worth, as the reports say it: "counts exact", or "each count
  /// at most B low" with `bound_text` for B (error_bound() as the report writes numbers).
  std::string accuracy(std::string_view bound_text) const;

  static uint64_t key_hash(std::string_view key);

  /// The live counters as (key hash, count), sorted by hash: with total(), the whole state of
  /// a summary that keeps no key bytes (a checkpoint records it).
  std::vector<std::pair<uint64_t, uint64_t>> counts() const;
  /// Replaces the state with recorded counters (at most the number of counters; keys empty).
  void restore(const std::vector<std::pair<uint64_t, uint64_t>>& counts, uint64_t total);

  /// One live counter, with the key bytes kept for it: with total(), the whole state of a
  /// summary (a checkpoint records it, so that a resumed run reports on every event).
  struct Counter {
    uint64_t hash;
    uint64_t count;
    std::string key;  // the first kKeyBytes bytes
    uint64_t length;  // the key's true length
  };
  /// The live counters, sorted by hash.
  std::vector<Counter> counters() const;
  /// Replaces the state with recorded counters (at most the number of counters are kept).
  void restore(const std::vector<Counter>& counters, uint64_t total);

  /// Bytes held by the summary: fixed at construction, whatever the stream.
  size_t memory_bytes() const {
    return (slots_.capacity() + scratch_.capacity()) * sizeof(Slot) +
           keys_.capacity() * sizeof(KeyBytes) + free_keys_.capacity() * sizeof(uint32_t);
  }

 private:
  // The probed part stays small (24 bytes a slot) so that lookups stay in cache; the key bytes
  // live apart and are touched only when a key enters the summary or is reported.
  struct Slot {
    uint64_t hash = 0;
    uint64_t count = 0;  // 0: empty
    uint32_t key = 0;    // index into keys_
  };
  struct KeyBytes {
    uint32_t length = 0;  // the key's true length (more than kKeyBytes: cut)
    char bytes[kKeyBytes];
  };

  /// The slot holding `hash`, or else the free slot that ends its probe.
  size_t probe(uint64_t hash) const;
  Slot* find(uint64_t hash);
  /// Adds a key that is not in the summary.
  void insert(std::string_view key, uint64_t hash, uint64_t count, size_t true_length);
  /// Fills the free slot `at` (from probe()).
  void place(size_t at, std::string_view key, uint64_t hash, uint64_t count, size_t true_length);
  void rebuild(const std::vector<Slot>& live);
  void subtract_from_all(uint64_t amount);

  size_t counters_;
  std::vector<Slot> slots_;    // open addressing, twice the counters, power of two
  std::vector<Slot> scratch_;  // the live counters during a sweep (reused)
  std::vector<KeyBytes> keys_;       // one per counter
  std::vector<uint32_t> free_keys_;  // indices of keys_ not in use
  size_t used_ = 0;
  uint64_t total_ = 0;
};

}  // namespace keyshard
