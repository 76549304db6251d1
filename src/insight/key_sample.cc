#include "insight/key_sample.h"

#include <algorithm>

namespace keyshard {

KeySample::KeySample(size_t capacity) : capacity_(std::max<size_t>(2, capacity)), slots_(64) {}

size_t KeySample::find(uint64_t hash) const {
  // (The low bits: the sample is chosen by the top ones.)
  const size_t mask = slots_.size() - 1;
  size_t i = hash & mask;
  while (slots_[i].used && slots_[i].hash != hash) i = (i + 1) & mask;
  return i;
}

void KeySample::rebuild(size_t slot_count) {
  std::vector<Slot> old(slot_count);
  old.swap(slots_);
  size_ = 0;
  for (const Slot& slot : old) {
    if (!slot.used || !samples(slot.hash)) continue;
    slots_[find(slot.hash)] = slot;
    ++size_;
  }
}

uint8_t* KeySample::note(uint64_t hash, bool* first) {
  *first = false;
  if (!samples(hash)) return nullptr;
  size_t at = find(hash);
  if (slots_[at].used) return &slots_[at].flags;
  if (size_ == capacity_) {
    // Full: the level goes up until there is room (at level 64 only the hash 0 is left), and the
    // new key may then be left out with the others.
    do {
      ++level_;
      rebuild(slots_.size());
    } while (size_ == capacity_);
    if (!samples(hash)) return nullptr;
    at = find(hash);
  } else if (2 * (size_ + 1) > slots_.size()) {
    rebuild(2 * slots_.size());
    at = find(hash);
  }
  slots_[at] = Slot{hash, 0, true};
  ++size_;
  *first = true;
  return &slots_[at].flags;
}

std::vector<uint8_t> KeySample::flags() const {
  std::vector<uint8_t> result;
  result.reserve(size_);
  for (const Slot& slot : slots_) {
    if (slot.used) result.push_back(slot.flags);
  }
  return result;
}

}  // namespace keyshard
