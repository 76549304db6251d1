#include "pipeline/output_arena.h"

#include <sys/mman.h>

#include <cstdint>

namespace keyshard {
namespace {

constexpr size_t kHugePage = 2u << 20;
// A page: a buffer written past the page cache (O_DIRECT) must start on one.
constexpr size_t kSlotAlignment = 4096;

size_t round_up(size_t value, size_t to) { return (value + to - 1) / to * to; }

}  // namespace

OutputArena::OutputArena(size_t slots, size_t slot_bytes)
    : slot_bytes_(round_up(slot_bytes, kSlotAlignment)), slots_(slots) {
  if (slots_ == 0 || slot_bytes_ == 0) return;
  const size_t bytes = round_up(slots_ * slot_bytes_, kHugePage);
  // One huge page more than needed, so that the slots can start on a huge-page boundary.
  // Pages are only committed as the buffers fill (MAP_NORESERVE).
  void* mapping = ::mmap(nullptr, bytes + kHugePage, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping == MAP_FAILED) return;
  mapping_ = mapping;
  mapped_bytes_ = bytes + kHugePage;
  first_ = reinterpret_cast<char*>(round_up(reinterpret_cast<uintptr_t>(mapping), kHugePage));
  (void)::madvise(first_, bytes, MADV_HUGEPAGE);  // a hint: without it, ordinary pages
  free_.reserve(slots_);
  for (size_t i = slots_; i > 0; --i) free_.push_back(first_ + (i - 1) * slot_bytes_);
}

OutputArena::~OutputArena() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapped_bytes_);
}

bool OutputArena::holds(const void* pointer) const {
  const auto* byte = static_cast<const char*>(pointer);
  return first_ != nullptr && byte >= first_ && byte < first_ + slots_ * slot_bytes_;
}

void* OutputArena::do_allocate(size_t bytes, size_t alignment) {
  if (bytes <= slot_bytes_ && alignment <= kSlotAlignment && !free_.empty()) {
    char* slot = free_.back();
    free_.pop_back();
    return slot;
  }
  return std::pmr::new_delete_resource()->allocate(bytes, alignment);
}

void OutputArena::do_deallocate(void* pointer, size_t bytes, size_t alignment) {
  if (holds(pointer)) {
    free_.push_back(static_cast<char*>(pointer));
    return;
  }
  std::pmr::new_delete_resource()->deallocate(pointer, bytes, alignment);
}

}  // namespace keyshard
