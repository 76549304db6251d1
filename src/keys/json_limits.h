// The sizes that bound how --format json lines are read (see json_key_extractor.h), apart from
// the extractor itself so that a caller sets them without the parser's headers.
#pragma once

#include <cstddef>

namespace keyshard {

/// Lines longer than this are not parsed into a tree: their tree would take many times their
/// size in memory; the strict grammar checker reads them instead.
inline constexpr size_t kTreeLineLimit = 1u << 20;

/// The lines of a block are parsed together in windows of whole lines, each ending with the line
/// that reaches this size: a window's structural index and trees stay in the CPU's caches.
inline constexpr size_t kBlockWindow = 128u << 10;

}  // namespace keyshard
