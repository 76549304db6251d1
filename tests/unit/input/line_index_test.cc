// index_lines against a plain byte-by-byte reference, on every size around the 32-byte blocks.
#include "input/line_index.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

std::vector<uint32_t> reference_starts(const std::string& text) {
  std::vector<uint32_t> starts{0};
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' && i + 1 < text.size()) starts.push_back(static_cast<uint32_t>(i + 1));
  }
  if (!text.empty()) starts.push_back(static_cast<uint32_t>(text.size()));
  return starts;
}

}  // namespace

TEST_CASE("index_lines finds every line start, with or without a final newline") {
  std::vector<uint32_t> starts;
  keyshard::index_lines("", 0, starts);
  CHECK(starts == std::vector<uint32_t>{0});
  keyshard::index_lines("a\nb", 3, starts);
  CHECK(starts == std::vector<uint32_t>{0, 2, 3});
  keyshard::index_lines("a\nb\n", 4, starts);
  CHECK(starts == std::vector<uint32_t>{0, 2, 4});
  keyshard::index_lines("\n\n", 2, starts);
  CHECK(starts == std::vector<uint32_t>{0, 1, 2});
}

TEST_CASE("index_lines agrees with a byte-by-byte scan on every size and newline density") {
  uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 33);
  };
  std::vector<uint32_t> starts;
  std::vector<size_t> sizes;
  for (size_t size = 0; size <= 200; ++size) sizes.push_back(size);
  sizes.insert(sizes.end(), {4095, 4096, 100001});  // long runs of short lines grow the index
  for (size_t size : sizes) {
    for (uint32_t density : {1u, 2u, 3u, 17u, 64u, 1000u}) {
      std::string text(size, 'x');
      for (char& c : text) c = next() % density == 0 ? '\n' : static_cast<char>('a' + next() % 26);
      keyshard::index_lines(text.data(), text.size(), starts);
      CAPTURE(size);
      CAPTURE(density);
      CHECK(starts == reference_starts(text));
    }
  }
}

TEST_CASE("end_of_lines stops just after the n-th newline, on every size and newline density") {
  uint64_t state = 777;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 33);
  };
  CHECK(keyshard::end_of_lines("a\nb\n", 4, 0) == 0);
  CHECK(keyshard::end_of_lines("a\nb\n", 4, 1) == 2);
  CHECK(keyshard::end_of_lines("a\nb\n", 4, 2) == 4);
  CHECK(keyshard::end_of_lines("a\nb\n", 4, 3) == 4);
  CHECK(keyshard::end_of_lines("a\nb", 3, 2) == 3);
  for (size_t size : {0, 1, 63, 64, 65, 127, 128, 129, 200, 4096, 100001}) {
    for (uint32_t density : {1u, 2u, 3u, 17u, 64u, 1000u}) {
      std::string text(size, 'x');
      for (char& c : text) c = next() % density == 0 ? '\n' : 'a';
      std::vector<size_t> ends;  // the reference: just after each newline
      for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\n') ends.push_back(i + 1);
      }
      CAPTURE(size);
      CAPTURE(density);
      for (size_t lines = 1; lines <= ends.size() + 2; lines += 1 + lines / 8) {
        CAPTURE(lines);
        const size_t want = lines <= ends.size() ? ends[lines - 1] : size;
        CHECK(keyshard::end_of_lines(text.data(), text.size(), lines) == want);
      }
    }
  }
}

TEST_CASE("trim_line_index keeps the lines before a line boundary, and the boundary as the end") {
  const std::string text = "ab\n\ncd\nef";
  std::vector<uint32_t> starts;
  for (const size_t size : {size_t{0}, size_t{3}, size_t{4}, size_t{7}, text.size()}) {
    CAPTURE(size);
    keyshard::index_lines(text.data(), text.size(), starts);
    keyshard::trim_line_index(starts, size);
    CHECK(starts == reference_starts(text.substr(0, size)));
  }
}

TEST_CASE("index_lines with a limit indexes the first lines only, and says where it stopped") {
  std::vector<uint32_t> starts;
  CHECK(keyshard::index_lines("a\nb\nc", 5, starts, 1) == 2);
  CHECK(starts == std::vector<uint32_t>{0, 2});
  CHECK(keyshard::index_lines("a\nb\nc", 5, starts, 2) == 4);
  CHECK(starts == std::vector<uint32_t>{0, 2, 4});
  CHECK(keyshard::index_lines("a\nb\nc", 5, starts, 3) == 5);  // the last line has no newline
  CHECK(starts == std::vector<uint32_t>{0, 2, 4, 5});
  CHECK(keyshard::index_lines("a\nb\n", 4, starts, 2) == 4);  // exactly the limit
  CHECK(starts == std::vector<uint32_t>{0, 2, 4});
  uint64_t state = 99;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 33);
  };
  for (size_t size : {0, 1, 63, 64, 65, 127, 128, 129, 200, 4096, 100001}) {
    for (uint32_t density : {1u, 2u, 3u, 17u, 64u, 1000u}) {
      std::string text(size, 'x');
      for (char& c : text) c = next() % density == 0 ? '\n' : 'a';
      CAPTURE(size);
      CAPTURE(density);
      for (size_t lines = 1; lines <= size + 2; lines += 1 + lines / 4) {
        CAPTURE(lines);
        // The reference: the whole index, cut just after the lines-th newline when there is one.
        const size_t end = keyshard::end_of_lines(text.data(), text.size(), lines);
        std::vector<uint32_t> want = reference_starts(text.substr(0, end));
        CHECK(keyshard::index_lines(text.data(), text.size(), starts, lines) == end);
        CHECK(starts == want);
        CHECK(starts.size() <= lines + 1);
      }
    }
  }
}
