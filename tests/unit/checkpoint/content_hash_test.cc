// The manifest's content hash: independent of how the bytes were split into writes, continued
// exactly after a restore from the recorded chain value, and the fingerprint window that
// recognises an input again.
#include "checkpoint/content_hash.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdlib>
#include <random>
#include <string>

#include "input/input_position.h"
#include "util/files.h"

namespace keyshard {
namespace {

std::string random_bytes(size_t size, unsigned seed) {
  std::mt19937 random(seed);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  return bytes;
}

uint64_t hash_in_pieces(const std::string& bytes, size_t piece) {
  ContentHash hash;
  for (size_t at = 0; at < bytes.size(); at += piece) {
    hash.update(std::string_view(bytes).substr(at, piece));
  }
  return hash.digest();
}

TEST_CASE("the content hash does not depend on how the bytes were written") {
  const std::string bytes = random_bytes(3 * ContentHash::kBlock + 12345, 1);
  const uint64_t whole = hash_in_pieces(bytes, bytes.size());
  for (size_t piece : {1ul, 7ul, 4096ul, ContentHash::kBlock - 1, ContentHash::kBlock,
                       ContentHash::kBlock + 1, 200000ul}) {
    CAPTURE(piece);
    CHECK(hash_in_pieces(bytes, piece) == whole);
  }
  // Its definition: a chain of XXH3-64 over whole 64 KiB blocks, then the rest.
  uint64_t chain = 0;
  size_t at = 0;
  for (; at + ContentHash::kBlock <= bytes.size(); at += ContentHash::kBlock) {
    chain = XXH3_64bits_withSeed(bytes.data() + at, ContentHash::kBlock, chain);
  }
  CHECK(whole == XXH3_64bits_withSeed(bytes.data() + at, bytes.size() - at, chain));
  CHECK(hash_in_pieces(bytes.substr(0, bytes.size() - 1), 4096) != whole);
}

TEST_CASE("a restored hash continues exactly, and a changed file is refused") {
  char path[] = "/tmp/keyshard-hash-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  const std::string bytes = random_bytes(2 * ContentHash::kBlock + 777, 2);
  for (size_t cut : {0ul, 1ul, 777ul, ContentHash::kBlock, ContentHash::kBlock + 5,
                     2 * ContentHash::kBlock + 777}) {
    CAPTURE(cut);
    REQUIRE(ftruncate(fd, 0) == 0);
    REQUIRE(lseek(fd, 0, SEEK_SET) == 0);
    REQUIRE(write_all(fd, bytes, path).ok());
    ContentHash before;
    before.update(std::string_view(bytes).substr(0, cut));
    ContentHash after;
    REQUIRE(after.restore(fd, path, cut, before.chain(), before.digest()).ok());
    after.update(std::string_view(bytes).substr(cut));
    CHECK(after.digest() == hash_in_pieces(bytes, 1000));
    CHECK(after.size() == bytes.size());
    if (cut % ContentHash::kBlock != 0) {
      ContentHash wrong;
      CHECK_FALSE(wrong.restore(fd, path, cut, before.chain(), before.digest() ^ 1).ok());
    }
  }
  uint64_t digest = 0, read = 0;
  REQUIRE(hash_file_prefix(fd, path, UINT64_MAX, digest, read).ok());
  CHECK(read == bytes.size());
  close(fd);
  unlink(path);
}

TEST_CASE("the fingerprint window keeps the first and the latest 4096 bytes") {
  const std::string bytes = random_bytes(20000, 3);
  for (size_t piece : {1ul, 100ul, 4096ul, 5000ul, 20000ul}) {
    CAPTURE(piece);
    FingerprintWindow window;
    for (size_t at = 0; at < bytes.size(); at += piece) {
      window.add(std::string_view(bytes).substr(at, piece));
    }
    CHECK(window.head_hash() == XXH3_64bits(bytes.data(), 4096));
    CHECK(window.tail_hash() == XXH3_64bits(bytes.data() + bytes.size() - 4096, 4096));
  }
  FingerprintWindow short_input;
  short_input.add("abc");
  CHECK(short_input.head_hash() == XXH3_64bits("abc", 3));
  CHECK(short_input.tail_hash() == short_input.head_hash());
}

}  // namespace
}  // namespace keyshard
