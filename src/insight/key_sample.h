// The distinct keys of a stream, in bounded memory: every key while there are at most
// `capacity` of them, and past that a sample of them chosen by hash. A key is in the sample when
// the top `level()` bits of its 64-bit hash are zero, and the level goes up by one (about half of
// the sample leaves) each time the sample would hold more than the capacity. So the sample is,
// at any moment, exactly the keys seen whose hash lies below 2^(64 - level): one key in
// 2^level, each kept from its first event to the end or left out from its first event, and the
// number of distinct keys is about size() * 2^level (Gibbons's distinct sampling, 2001).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace keyshard {

class KeySample {
 public:
  /// Once the keys outnumber the capacity (at least 2), the sample holds at most that many,
  /// and about half as many just after each rise of the level.
  explicit KeySample(size_t capacity);

  /// Notes an event of a key by the key's 64-bit hash. Returns the flags kept for the key (the
  /// caller's to set through the pointer, valid until the next call), or null when the key is not
  /// in the sample. `*first`: whether the key is new to the sample (its flags are then 0).
  uint8_t* note(uint64_t hash, bool* first);

  /// Whether the key with this hash would be in the sample at the present level.
  bool samples(uint64_t hash) const { return level_ == 0 || hash >> (64 - level_) == 0; }
  /// Keys in the sample now.
  size_t size() const { return size_; }
  /// The sample holds one key in 2^level (0: every key seen).
  unsigned level() const { return level_; }
  /// The flags of every key in the sample, in no order.
  std::vector<uint8_t> flags() const;

  /// Bytes held by the table: at most about 32 bytes a key of the capacity.
  size_t memory_bytes() const { return slots_.capacity() * sizeof(Slot); }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint8_t flags = 0;
    bool used = false;
  };

  size_t find(uint64_t hash) const;  // the slot holding `hash`, or the free one its probe ends on
  void rebuild(size_t slot_count);   // the keys the level samples, into this many slots

  size_t capacity_;
  std::vector<Slot> slots_;  // open addressing, a power of two, at most half full
  size_t size_ = 0;
  unsigned level_ = 0;
};

}  // namespace keyshard
