#include "checkpoint/content_hash.h"

#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "util/files.h"

namespace keyshard {

void ContentHash::FreeState::operator()(XXH3_state_t* state) const { XXH3_freeState(state); }

ContentHash::ContentHash() : block_(XXH3_createState()) {
  // XXH3_createState leaves the state uninitialized but for its seed, and GCC cannot see that
  // the reset reads nothing else (a -Werror build under ASan stops there): zeroed first.
  std::memset(block_.get(), 0, sizeof(XXH3_state_t));
  XXH3_64bits_reset_withSeed(block_.get(), chain_);
}

void ContentHash::update(std::string_view bytes) {
  size_ += bytes.size();
  while (!bytes.empty()) {
    if (block_fill_ == 0 && bytes.size() >= kBlock) {  // a whole block: in one call
      chain_ = XXH3_64bits_withSeed(bytes.data(), kBlock, chain_);
      bytes.remove_prefix(kBlock);
      XXH3_64bits_reset_withSeed(block_.get(), chain_);
      continue;
    }
    const size_t take = std::min(bytes.size(), kBlock - block_fill_);
    XXH3_64bits_update(block_.get(), bytes.data(), take);
    block_fill_ += take;
    bytes.remove_prefix(take);
    if (block_fill_ == kBlock) {
      chain_ = XXH3_64bits_digest(block_.get());
      block_fill_ = 0;
    }
    if (block_fill_ == 0) XXH3_64bits_reset_withSeed(block_.get(), chain_);
  }
}

uint64_t ContentHash::digest() const { return XXH3_64bits_digest(block_.get()); }

Status ContentHash::restore(int fd, const std::string& name, uint64_t size, uint64_t chain,
                            uint64_t digest) {
  const uint64_t rest = size % kBlock;
  std::string tail(rest, '\0');
  const long got = read_at(fd, tail.data(), rest, size - rest);
  if (got < 0) return Status::error("cannot read back: " + errno_text(errno), name);
  if (got < static_cast<long>(rest)) {
    return Status::error("is shorter than the checkpoint records", name)
        .because(Cause::kOutputChanged);
  }
  if (XXH3_64bits_withSeed(tail.data(), tail.size(), chain) != digest) {
    return Status::error("was changed since the checkpoint (its content hash differs)", name)
        .because(Cause::kOutputChanged);
  }
  chain_ = chain;
  size_ = size;
  block_fill_ = tail.size();
  XXH3_64bits_reset_withSeed(block_.get(), chain_);
  XXH3_64bits_update(block_.get(), tail.data(), tail.size());
  return {};
}

Status hash_file_prefix(int fd, const std::string& name, uint64_t size, uint64_t& digest,
                        uint64_t& read) {
  ContentHash hash;
  auto buffer = std::make_unique<char[]>(1 << 20);
  read = 0;
  if (::lseek(fd, 0, SEEK_SET) < 0) return Status::error("cannot seek: " + errno_text(errno), name);
  while (read < size) {
    const long got = read_some(fd, buffer.get(), std::min<uint64_t>(1 << 20, size - read));
    if (got < 0) return Status::error("read failed: " + errno_text(errno), name);
    if (got == 0) break;
    hash.update({buffer.get(), static_cast<size_t>(got)});
    read += static_cast<uint64_t>(got);
  }
  digest = hash.digest();
  return {};
}

}  // namespace keyshard
