#include "checkpoint/content_hash.h"

#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <memory>

#include "util/files.h"

namespace keyshard {

void ContentHash::update(std::string_view bytes) {
  size_ += bytes.size();
  if (!pending_.empty()) {
    const size_t take = std::min(bytes.size(), kBlock - pending_.size());
    pending_.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
    if (pending_.size() < kBlock) return;
    chain_ = XXH3_64bits_withSeed(pending_.data(), kBlock, chain_);
    pending_.clear();
  }
  while (bytes.size() >= kBlock) {
    chain_ = XXH3_64bits_withSeed(bytes.data(), kBlock, chain_);
    bytes.remove_prefix(kBlock);
  }
  pending_.assign(bytes);
}

uint64_t ContentHash::digest() const {
  return XXH3_64bits_withSeed(pending_.data(), pending_.size(), chain_);
}

Status ContentHash::restore(int fd, const std::string& name, uint64_t size, uint64_t chain,
                            uint64_t digest) {
  const uint64_t rest = size % kBlock;
  std::string tail(rest, '\0');
  size_t done = 0;
  while (done < rest) {
    const ssize_t got = ::pread(fd, tail.data() + done, rest - done,
                                static_cast<off_t>(size - rest + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Status::error("cannot read back: " + errno_text(errno), name);
    if (got == 0) return Status::error("is shorter than the checkpoint records", name);
    done += static_cast<size_t>(got);
  }
  if (XXH3_64bits_withSeed(tail.data(), tail.size(), chain) != digest) {
    return Status::error("was changed since the checkpoint (its content hash differs)", name);
  }
  chain_ = chain;
  size_ = size;
  pending_ = std::move(tail);
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
