// Fuzz target: decoding a checkpoint file, which keyshard reads back from disk and must never
// half trust. The input is the text before the checksum; the target appends a right checksum,
// so that the decoder goes past it into the JSON. Whatever it accepts must encode to text that
// decodes again to the same checkpoint (the same text once more).
#include <xxhash.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "checkpoint/checkpoint_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace keyshard;
  std::string text(reinterpret_cast<const char*>(data), size);
  text += fmt::format("  \"checksum\": \"{:016x}\"\n}}\n", XXH3_64bits(data, size));
  Checkpoint decoded;
  if (!decode_checkpoint(text, "fuzz", decoded)) return 0;
  const std::string encoded = encode_checkpoint(decoded);
  Checkpoint again;
  if (Status status = decode_checkpoint(encoded, "fuzz", again); !status) {
    std::fprintf(stderr, "an accepted checkpoint, encoded again, is refused: %s\n",
                 status.message().c_str());
    std::abort();
  }
  if (encode_checkpoint(again) != encoded) {
    std::fprintf(stderr, "an accepted checkpoint does not encode the same twice\n");
    std::abort();
  }
  return 0;
}
