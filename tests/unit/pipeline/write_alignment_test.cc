// Partition files are written in pieces that end on a multiple of the alignment (see
// write_alignment.h): the rule itself, and an owner that follows it through full buffers, a
// checkpoint, a long run of lines and the end of the run.
#include "pipeline/write_alignment.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "pipeline/partition_owner.h"
#include "unit/temp_dir.h"

namespace keyshard {
namespace {

constexpr size_t kOneMiB = 1 << 20;

// A chunk of `lines`, every one for partition 0.
Chunk chunk_of(const std::vector<std::string>& lines, uint64_t sequence) {
  Chunk chunk;
  size_t size = 0;
  for (const std::string& line : lines) size += line.size() + 1;
  chunk.data = std::make_unique<char[]>(size + kLinePadding);
  chunk.capacity = size;
  chunk.sequence = sequence;
  size_t at = 0;
  for (uint32_t i = 0; i < lines.size(); ++i) {
    chunk.line_starts.push_back(static_cast<uint32_t>(at));
    std::memcpy(chunk.data.get() + at, lines[i].data(), lines[i].size());
    at += lines[i].size();
    chunk.data[at++] = '\n';
    chunk.destinations.push_back(0);
    chunk.order.push_back(i);
  }
  std::memset(chunk.data.get() + at, 0, kLinePadding);
  chunk.size = size;
  chunk.line_starts.push_back(static_cast<uint32_t>(size));
  chunk.group_begin = {0, static_cast<uint32_t>(lines.size())};
  return chunk;
}

// `count` lines of `size` bytes, numbered from `first`.
std::vector<std::string> lines_of(size_t count, size_t size, size_t first) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < count; ++i) {
    std::string line = "{\"n\":" + std::to_string(first + i) + ",\"pad\":\"";
    line.append(size - line.size() - 2, 'x');
    line += "\"}";
    lines.push_back(std::move(line));
  }
  return lines;
}

uint64_t size_of(const std::string& path) {
  struct stat info {};
  REQUIRE(::stat(path.c_str(), &info) == 0);
  return static_cast<uint64_t>(info.st_size);
}

}  // namespace

TEST_CASE("bytes_to_alignment: from a size to the next multiple") {
  CHECK(bytes_to_alignment(0, 4096) == 4096);
  CHECK(bytes_to_alignment(1, 4096) == 4095);
  CHECK(bytes_to_alignment(4095, 4096) == 1);
  CHECK(bytes_to_alignment(8192, 4096) == 4096);
  CHECK(bytes_to_alignment(3 * kOneMiB + 10, kOneMiB) == kOneMiB - 10);
}

TEST_CASE("aligned_write_size: up to the last multiple, unless that keeps back much") {
  // Aligned file, a full buffer and a line past it: the line's piece stays.
  CHECK(aligned_write_size(0, kOneMiB + 250, kOneMiB) == kOneMiB);
  CHECK(aligned_write_size(2 * kOneMiB, kOneMiB + 250, kOneMiB) == kOneMiB);
  // Exactly on a multiple: everything.
  CHECK(aligned_write_size(0, kOneMiB, kOneMiB) == kOneMiB);
  // An unaligned file (after a checkpoint) is brought back to a multiple.
  CHECK(aligned_write_size(kOneMiB + 1000, kOneMiB - 1000 + 300, kOneMiB) == kOneMiB - 1000);
  // No multiple among the bytes: everything.
  CHECK(aligned_write_size(100, 50, 4096) == 50);
  // More than a sixteenth kept back (a long run of lines): everything.
  CHECK(aligned_write_size(0, kOneMiB + kOneMiB / 16, kOneMiB) == kOneMiB);
  CHECK(aligned_write_size(0, kOneMiB + kOneMiB / 16 + 1, kOneMiB) == kOneMiB + kOneMiB / 16 + 1);
  CHECK(aligned_write_size(0, 32768 + 3000, 32768) == 32768 + 3000);
  CHECK(aligned_write_size(0, 32768 + 2048, 32768) == 32768);
}

TEST_CASE("an owner writes a partition file in pieces that end on multiples of a MiB") {
  const TempDir dir;
  RunConfig config;
  config.inputs = {"in"};
  config.input_names = {"in"};
  config.output_dir = dir.path();
  config.partitions = 1;  // a buffer of 1 MiB, written on multiples of 1 MiB
  config.on_bad = BadLinePolicy::kSkip;
  const std::string path = dir.path() + "/" + partition_file_name(config, 0);
  PartitionOwner owner(config, 0, 1);
  REQUIRE(owner.open(nullptr));

  std::string expected;
  uint64_t sequence = 0;
  size_t numbered = 0;
  auto apply = [&](const std::vector<std::string>& lines) {
    for (const std::string& line : lines) expected += line + "\n";
    numbered += lines.size();
    REQUIRE(owner.apply(chunk_of(lines, sequence++)));
  };

  // Chunks of 64 lines of 250 bytes (16 KiB), until the file's bytes reach `until`; after
  // each, the file's size must be `allowed` or a multiple of a MiB.
  auto apply_until = [&](uint64_t until, uint64_t allowed) {
    while (expected.size() < until) {
      apply(lines_of(64, 250, numbered));
      const uint64_t size = size_of(path);
      CHECK((size % kOneMiB == 0 || size == allowed));
    }
  };

  SUBCASE("full buffers, a checkpoint, then full buffers again") {
    apply_until(2 * kOneMiB + kOneMiB / 2, 0);  // two writes of exactly a MiB, the rest held
    CHECK(size_of(path) == 2 * kOneMiB);
    // A checkpoint writes everything: the file ends with a whole line.
    OwnerCut cut;
    REQUIRE(owner.checkpoint(cut));
    const uint64_t checkpointed = size_of(path);
    CHECK(checkpointed == expected.size());
    CHECK(checkpointed % kOneMiB != 0);
    // The next write brings the file back to a multiple of a MiB.
    apply_until(3 * kOneMiB + kOneMiB / 2, checkpointed);
    CHECK(size_of(path) == 3 * kOneMiB);
  }
  SUBCASE("a long run of lines is written whole rather than moved") {
    apply(lines_of(kOneMiB / 2 / 251, 250, numbered));  // half a MiB: held
    CHECK(size_of(path) == 0);
    // Lines of 100 KiB: the buffer's end lies far past a multiple, so all of it is written.
    apply(lines_of(6, 100 << 10, numbered));
    const uint64_t whole = size_of(path);
    CHECK(whole == expected.size());
    CHECK(whole > kOneMiB);
    // The buffers after it are written up to multiples of a MiB again.
    apply_until(2 * kOneMiB + kOneMiB / 2, whole);
    CHECK(size_of(path) == 2 * kOneMiB);
  }
  REQUIRE(owner.finish());
  std::ifstream in(path, std::ios::binary);
  const std::string held((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(held.size() == expected.size());
  CHECK(held == expected);
}

}  // namespace keyshard
