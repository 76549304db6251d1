// Fuzz target: parsing a -k value. Whatever parses must parse again, from the JSON Pointer that
// json_pointer_of() gives for it, to the same path.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "keys/key_path.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace keyshard;
  const std::string_view spec(reinterpret_cast<const char*>(data), size);
  KeyPath path;
  if (!parse_key_path(spec, path)) return 0;
  const std::string pointer = json_pointer_of(path);
  KeyPath again;
  if (!parse_key_path(pointer, again) || json_pointer_of(again) != pointer ||
      again.components.size() != path.components.size()) {
    std::fprintf(stderr, "-k \"%.*s\" does not parse again from its pointer \"%s\"\n",
                 static_cast<int>(spec.size()), spec.data(), pointer.c_str());
    std::abort();
  }
  return 0;
}
