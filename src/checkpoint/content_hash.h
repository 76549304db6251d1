// The hash of an output file's content that the manifest records and `keyshard verify` checks.
// It is a chain over fixed 64 KiB blocks of the file, so it does not depend on how the bytes were
// written, and a resumed run continues it from the recorded chain value after re-reading only
// the last, incomplete block:
//   h = 0; for each whole block b: h = XXH3_64(b, seed h);  digest = XXH3_64(rest, seed h)
#pragma once

#include <xxhash.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "util/status.h"

namespace keyshard {

class ContentHash {
 public:
  static constexpr size_t kBlock = 64u << 10;

  ContentHash();

  /// Adds bytes that follow everything added so far.
  void update(std::string_view bytes);
  /// The hash of all bytes added so far.
  uint64_t digest() const;
  /// The chain value over the whole blocks (recorded so that a resumed run can continue).
  uint64_t chain() const { return chain_; }
  uint64_t size() const { return size_; }

  /// Continues the hash of the first `size` bytes of the file at `fd`, whose whole blocks chain
  /// to `chain`: reads the incomplete last block back and checks that the digest is `digest`.
  Status restore(int fd, const std::string& name, uint64_t size, uint64_t chain,
                 uint64_t digest);

 private:
  struct FreeState {
    void operator()(XXH3_state_t* state) const;
  };
  uint64_t chain_ = 0;
  uint64_t size_ = 0;
  // The incomplete last block, hashed as it streams in (no copy of the bytes).
  std::unique_ptr<XXH3_state_t, FreeState> block_;
  size_t block_fill_ = 0;
};

/// The digest of the first `size` bytes of the file at `fd` (read from its start) (less if it is shorter; `read`
/// receives how many bytes there were).
Status hash_file_prefix(int fd, const std::string& name, uint64_t size, uint64_t& digest,
                        uint64_t& read);

}  // namespace keyshard
