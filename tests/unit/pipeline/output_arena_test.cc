// The partition buffers' arena: a buffer takes a slot, gives it back, and outgrows it without
// losing a byte; buffers beyond the slots, or bigger than one, live on the heap.
#include "pipeline/output_arena.h"

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

namespace keyshard {

TEST_CASE("a buffer takes a slot and gives it back for the next one") {
  OutputArena arena(2, 1000);
  std::pmr::string first(&arena), second(&arena);
  first.reserve(900);
  second.reserve(900);
  CHECK(arena.holds(first.data()));
  CHECK(arena.holds(second.data()));
  CHECK(first.data() != second.data());
  const char* slot = first.data();
  std::pmr::string third(&arena);
  third.reserve(900);
  CHECK_FALSE(arena.holds(third.data()));  // both slots are taken: the heap
  std::pmr::string(&arena).swap(first);    // first's slot is free again
  std::pmr::string fourth(&arena);
  fourth.reserve(900);
  CHECK(fourth.data() == slot);
}

TEST_CASE("a buffer that outgrows its slot keeps every byte, and its slot is reused") {
  OutputArena arena(1, 256);
  std::pmr::string buffer(&arena);
  buffer.reserve(200);
  const char* slot = buffer.data();
  REQUIRE(arena.holds(slot));
  std::string want;
  for (int i = 0; i < 5000; ++i) want += static_cast<char>('a' + i % 26);
  buffer.append(want.substr(0, 150));
  buffer.append(want.substr(150));  // far past the slot: moves to the heap
  CHECK_FALSE(arena.holds(buffer.data()));
  CHECK(std::string_view(buffer) == want);
  std::pmr::string(&arena).swap(buffer);  // the heap memory goes back
  std::pmr::string next(&arena);
  next.reserve(200);
  CHECK(next.data() == slot);
}

TEST_CASE("without slots, every buffer is on the heap") {
  OutputArena arena(0, 1024);
  std::pmr::string buffer(&arena);
  buffer.assign(3000, 'x');
  CHECK_FALSE(arena.holds(buffer.data()));
  CHECK(std::string_view(buffer) == std::string(3000, 'x'));
}

TEST_CASE("many buffers in many slots stay apart") {
  constexpr size_t kSlots = 1024;
  OutputArena arena(kSlots, 4096 + 1);
  std::vector<std::pmr::string> buffers;
  for (size_t i = 0; i < kSlots; ++i) {
    buffers.emplace_back(&arena);
    buffers.back().reserve(4096);
  }
  for (size_t round = 0; round < 3; ++round) {
    for (size_t i = 0; i < kSlots; ++i) buffers[i].append(1000, static_cast<char>('A' + i % 50));
  }
  for (size_t i = 0; i < kSlots; ++i) {
    CAPTURE(i);
    CHECK(arena.holds(buffers[i].data()));
    CHECK(std::string_view(buffers[i]) == std::string(3000, static_cast<char>('A' + i % 50)));
  }
}

}  // namespace keyshard
