#include "input/input_position.h"

#include <xxhash.h>

namespace keyshard {

void FingerprintWindow::add(std::string_view bytes) {
  if (head_.size() < kFingerprintBytes) {
    head_.append(bytes.substr(0, kFingerprintBytes - head_.size()));
  }
  if (bytes.size() >= kFingerprintBytes) {
    tail_.assign(bytes.substr(bytes.size() - kFingerprintBytes));
  } else {
    tail_.append(bytes);
    if (tail_.size() > kFingerprintBytes) tail_.erase(0, tail_.size() - kFingerprintBytes);
  }
}

uint64_t FingerprintWindow::head_hash() const { return XXH3_64bits(head_.data(), head_.size()); }
uint64_t FingerprintWindow::tail_hash() const { return XXH3_64bits(tail_.data(), tail_.size()); }

}  // namespace keyshard
