// The text form of a checkpoint: one JSON object ending in a checksum of everything before it.
// Decoding trusts nothing: a file is either exactly what encode() wrote, or refused with a
// reason (truncated, checksum mismatch, another version, a missing or ill-typed field).
#pragma once

#include <string>
#include <string_view>

#include "checkpoint/checkpoint.h"
#include "util/status.h"

namespace keyshard {

std::string encode_checkpoint(const Checkpoint& checkpoint);

/// Parses `text` into `checkpoint`; on failure the Status names `name` and the reason.
Status decode_checkpoint(std::string_view text, const std::string& name, Checkpoint& checkpoint);

}  // namespace keyshard
