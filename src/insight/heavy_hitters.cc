// Misra-Gries: a monitored key's counter goes up; a new key takes a free counter; when none is
// free, every counter goes down by the new key's weight (capped by the smallest count) and the
// ones that reach zero are freed. Each such decrement cancels m+1 units of the stream, so it
// happens at most N/(m+1) times, and the O(m) sweep costs O(1) per event amortised.
#include "insight/heavy_hitters.h"

#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "util/json_text.h"

namespace keyshard {

namespace {

// Most keys are short: copied with two overlapping loads and stores, not a call to memcpy,
// which costs more than the rest of an add() for them.
template <size_t Size>
void copy_both_ends(char* to, const char* from, size_t n) {
  char head[Size], tail[Size];
  std::memcpy(head, from, Size);
  std::memcpy(tail, from + n - Size, Size);
  std::memcpy(to, head, Size);
  std::memcpy(to + n - Size, tail, Size);
}

void copy_key_bytes(char* to, const char* from, size_t n) {
  if (n >= 16 && n <= 32) {
    copy_both_ends<16>(to, from, n);
  } else if (n >= 8 && n < 16) {
    copy_both_ends<8>(to, from, n);
  } else if (n >= 4 && n < 8) {
    copy_both_ends<4>(to, from, n);
  } else if (n < 4) {
    for (size_t i = 0; i < n; ++i) to[i] = from[i];
  } else {
    std::memcpy(to, from, n);
  }
}

}  // namespace

HeavyHitters::HeavyHitters(size_t counters)
    : counters_(std::max<size_t>(1, counters)),
      slots_(std::bit_ceil(2 * std::max<size_t>(1, counters))),
      keys_(counters_) {
  scratch_.reserve(counters_);
  for (size_t i = counters_; i > 0; --i) free_keys_.push_back(static_cast<uint32_t>(i - 1));
}

uint64_t HeavyHitters::key_hash(std::string_view key) {
  return XXH3_64bits(key.data(), key.size());
}

size_t HeavyHitters::probe(uint64_t hash) const {
  const size_t mask = slots_.size() - 1;
  size_t i = hash & mask;
  while (slots_[i].count != 0 && slots_[i].hash != hash) i = (i + 1) & mask;
  return i;
}

HeavyHitters::Slot* HeavyHitters::find(uint64_t hash) {
  Slot& slot = slots_[probe(hash)];
  return slot.count != 0 ? &slot : nullptr;
}

uint64_t HeavyHitters::count_of(uint64_t hash) const { return slots_[probe(hash)].count; }

void HeavyHitters::insert(std::string_view key, uint64_t hash, uint64_t count,
                          size_t true_length) {
  place(probe(hash), key, hash, count, true_length);
}

void HeavyHitters::place(size_t at, std::string_view key, uint64_t hash, uint64_t count,
                         size_t true_length) {
  Slot& slot = slots_[at];
  slot.hash = hash;
  slot.count = count;
  slot.key = free_keys_.back();
  free_keys_.pop_back();
  KeyBytes& stored = keys_[slot.key];
  copy_key_bytes(stored.bytes, key.data(), std::min(key.size(), kKeyBytes));
  // A longer key keeps its true length so the report can say it was cut.
  stored.length = static_cast<uint32_t>(std::min<size_t>(true_length, UINT32_MAX));
  ++used_;
}

std::vector<std::pair<uint64_t, uint64_t>> HeavyHitters::counts() const {
  std::vector<std::pair<uint64_t, uint64_t>> result;
  for (const Slot& slot : slots_) {
    if (slot.count != 0) result.emplace_back(slot.hash, slot.count);
  }
  std::sort(result.begin(), result.end());
  return result;
}

namespace {

// What a summary of m counters takes from every count when it is given more than m (a merge, a
// restore): the (m+1)-th largest, so that only m stay above it.
uint64_t cut_for(std::vector<uint64_t> counts, size_t counters) {
  if (counts.size() <= counters) return 0;
  std::nth_element(counts.begin(), counts.begin() + static_cast<long>(counters), counts.end(),
                   std::greater<>());
  return counts[counters];
}

}  // namespace

uint64_t HeavyHitters::error_bound() const {
  // Each cancellation takes the same amount c from at least m + 1 counts (the m counters and
  // the new key's; in a merge or a restore, the m + 1 largest and any below), so C falls short of
  // N by at least (m + 1) c, while no count falls short of its key's true count by more than
  // the sum of the c's.
  uint64_t counted = 0;
  for (const Slot& slot : slots_) counted += slot.count;
  return (total_ - std::min(counted, total_)) / (counters_ + 1);
}

void HeavyHitters::restore(const std::vector<std::pair<uint64_t, uint64_t>>& counts,
                           uint64_t total) {
  std::fill(slots_.begin(), slots_.end(), Slot{});
  free_keys_.clear();
  for (size_t i = counters_; i > 0; --i) free_keys_.push_back(static_cast<uint32_t>(i - 1));
  used_ = 0;
  // (More counts than counters, from a wider summary: cut as a merge does.)
  std::vector<uint64_t> all;
  for (const auto& entry : counts) all.push_back(entry.second);
  const uint64_t cut = cut_for(std::move(all), counters_);
  for (const auto& [hash, count] : counts) {
    if (count <= cut || find(hash) != nullptr || used_ == counters_) continue;
    insert({}, hash, count - cut, 0);
  }
  total_ = total;
}

std::vector<HeavyHitters::Counter> HeavyHitters::counters() const {
  std::vector<Counter> result;
  for (const Slot& slot : slots_) {
    if (slot.count == 0) continue;
    const KeyBytes& key = keys_[slot.key];
    result.push_back(Counter{slot.hash, slot.count,
                             std::string(key.bytes, std::min<size_t>(key.length, kKeyBytes)),
                             key.length});
  }
  std::sort(result.begin(), result.end(),
            [](const Counter& a, const Counter& b) { return a.hash < b.hash; });
  return result;
}

void HeavyHitters::restore(const std::vector<Counter>& counters, uint64_t total) {
  restore(std::vector<std::pair<uint64_t, uint64_t>>{}, total);
  std::vector<uint64_t> all;
  for (const Counter& counter : counters) all.push_back(counter.count);
  const uint64_t cut = cut_for(std::move(all), counters_);
  for (const Counter& counter : counters) {
    if (counter.count <= cut || find(counter.hash) != nullptr || used_ == counters_) continue;
    const std::string_view kept(counter.key.data(), std::min(counter.key.size(), kKeyBytes));
    insert(kept, counter.hash, counter.count - cut,
           std::max<uint64_t>(counter.length, kept.size()));
  }
}

void HeavyHitters::rebuild(const std::vector<Slot>& live) {
  std::fill(slots_.begin(), slots_.end(), Slot{});
  used_ = 0;
  for (const Slot& slot : live) {
    slots_[probe(slot.hash)] = slot;
    ++used_;
  }
}

void HeavyHitters::subtract_from_all(uint64_t amount) {
  scratch_.clear();
  for (Slot& slot : slots_) {
    if (slot.count > amount) {
      slot.count -= amount;
      scratch_.push_back(slot);
    } else if (slot.count != 0) {
      free_keys_.push_back(slot.key);
    }
  }
  rebuild(scratch_);  // open addressing: re-place what is left rather than delete
}

void HeavyHitters::add(std::string_view key, uint64_t hash, uint64_t weight) {
  total_ += weight;
  const size_t i = probe(hash);  // one probe: the key's slot, or where it would go
  if (slots_[i].count != 0) {
    slots_[i].count += weight;
    return;
  }
  if (used_ < counters_) {
    place(i, key, hash, weight, key.size());
    return;
  }
  // Full: cancel min(weight, smallest count) from every counter and from the new key. Every
  // live count is at least 1, so a single event cancels 1 without looking for the smallest.
  uint64_t cancelled = weight;
  if (weight > 1) {
    for (const Slot& slot : slots_) {
      if (slot.count != 0) cancelled = std::min(cancelled, slot.count);
    }
  }
  subtract_from_all(cancelled);
  if (weight > cancelled) insert(key, hash, weight - cancelled, key.size());
}

void HeavyHitters::merge(const HeavyHitters& other) {
  // Add the counters key by key, then keep the m largest after subtracting the (m+1)-th.
  struct Merged {
    uint64_t hash;
    uint64_t count;
    KeyBytes key;
  };
  std::vector<Merged> combined;
  for (const Slot& slot : slots_) {
    if (slot.count != 0) combined.push_back(Merged{slot.hash, slot.count, keys_[slot.key]});
  }
  for (const Slot& slot : other.slots_) {
    if (slot.count == 0) continue;
    auto same = std::find_if(combined.begin(), combined.end(),
                             [&](const Merged& mine) { return mine.hash == slot.hash; });
    if (same != combined.end()) {
      same->count += slot.count;
    } else {
      combined.push_back(Merged{slot.hash, slot.count, other.keys_[slot.key]});
    }
  }
  total_ += other.total_;
  std::vector<uint64_t> counts;
  for (const Merged& merged : combined) counts.push_back(merged.count);
  const uint64_t cut = cut_for(std::move(counts), counters_);  // at most m counts stay above it
  std::fill(slots_.begin(), slots_.end(), Slot{});
  used_ = 0;
  free_keys_.clear();
  for (size_t i = counters_; i > 0; --i) free_keys_.push_back(static_cast<uint32_t>(i - 1));
  for (const Merged& merged : combined) {
    if (merged.count <= cut) continue;
    const size_t kept = std::min<size_t>(merged.key.length, kKeyBytes);
    insert(std::string_view(merged.key.bytes, kept), merged.hash, merged.count - cut,
           merged.key.length);
  }
}

namespace {

// A cut key may end inside a character: it is shown as text up to the last whole one.
std::string_view whole_characters(const HeavyHitters::Entry& entry) {
  std::string_view key = entry.key;
  for (size_t drop = 1; entry.truncated && drop <= 3 && drop < entry.key.size(); ++drop) {
    if (is_valid_utf8(key)) break;
    key = std::string_view(entry.key).substr(0, entry.key.size() - drop);
  }
  return is_valid_utf8(key) ? key : std::string_view(entry.key);
}

}  // namespace

std::string HeavyHitters::display(const Entry& entry) {
  std::string text;
  const std::string_view key = whole_characters(entry);
  if (is_valid_utf8(key)) {
    append_json_string_for_terminal(text, key);
  } else {
    text = "base64:";
    append_base64(text, entry.key);
  }
  if (entry.truncated) text += "...";
  return text;
}

void HeavyHitters::append_json_key(std::string& out, const Entry& entry) {
  append_json_bytes_member(out, "key", whole_characters(entry), ": ");
}

std::string HeavyHitters::accuracy(std::string_view bound_text) const {
  if (error_bound() == 0) return "counts exact";
  return "each count at most " + std::string(bound_text) + " low";
}

std::vector<HeavyHitters::Entry> HeavyHitters::top(size_t limit) const {
  std::vector<Entry> entries;
  for (const Slot& slot : slots_) {
    if (slot.count == 0) continue;
    const KeyBytes& key = keys_[slot.key];
    const size_t kept = std::min<size_t>(key.length, kKeyBytes);
    entries.push_back(Entry{std::string(key.bytes, kept), key.length > kKeyBytes, slot.count});
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.count != b.count ? a.count > b.count : a.key < b.key;
  });
  if (entries.size() > limit) entries.resize(limit);
  return entries;
}

}  // namespace keyshard
