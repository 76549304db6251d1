// Memory for one owner's partition buffers, side by side in one mapping that the kernel is
// asked to back with huge pages (2 MiB). With many partitions, consecutive copies land in
// different buffers; on 4 KiB pages most of them would miss the TLB (-n 1024: 32 MiB of
// buffers, 8,192 pages). Each buffer takes one slot; a buffer grown past its slot by a long
// line is served by the heap instead, and its slot waits for the next one.
#pragma once

#include <cstddef>
#include <memory_resource>
#include <vector>

namespace keyshard {

class OutputArena final : public std::pmr::memory_resource {
 public:
  /// Room for `slots` buffers of up to `slot_bytes` each. Without a mapping (mmap failed),
  /// every buffer comes from the heap.
  OutputArena(size_t slots, size_t slot_bytes);
  ~OutputArena() override;
  OutputArena(const OutputArena&) = delete;
  OutputArena& operator=(const OutputArena&) = delete;

  /// Whether `pointer` is in one of the arena's slots.
  bool holds(const void* pointer) const;

 private:
  void* do_allocate(size_t bytes, size_t alignment) override;
  void do_deallocate(void* pointer, size_t bytes, size_t alignment) override;
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }

  void* mapping_ = nullptr;  // as mmap returned it
  size_t mapped_bytes_ = 0;
  char* first_ = nullptr;  // the first slot, on a 2 MiB boundary
  size_t slot_bytes_ = 0;
  size_t slots_ = 0;
  std::vector<char*> free_;  // slots not in use
};

}  // namespace keyshard
