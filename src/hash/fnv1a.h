// librdkafka's FNV-1a (32-bit), including its final step that takes the absolute value of the
// hash as a signed int to agree with Sarama. Hand-written: no library has that exact variant.
#pragma once

#include <cstdint>
#include <string_view>

namespace keyshard {

/// librdkafka's rd_fnv1a(): FNV-1a 32-bit, then the absolute value as a signed 32-bit int.
uint32_t librdkafka_fnv1a(std::string_view key);

}  // namespace keyshard
