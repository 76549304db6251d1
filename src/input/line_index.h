// Finding the lines of a chunk: the offset where each line starts. This runs over every input
// byte, so it compares 64 bytes at a time where the CPU allows rather than calling memchr once
// per line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace keyshard {

/// Fills `starts` with the offset of every line in data[0, size), then one more entry: `size`.
/// A line ends after '\n'; a last line without one still counts. Empty input has no lines:
/// `starts` is just {0}.
void index_lines(const char* data, size_t size, std::vector<uint32_t>& starts);

/// As index_lines, but of the first `max_lines` lines only (at least 1): when data[0, size)
/// holds more, the index stops just after the max_lines-th '\n', its last entry. Returns the
/// size of what it indexed: `size`, or that offset. (The work and the index stay bounded by
/// `max_lines`, whatever the number of short lines in `data`.)
size_t index_lines(const char* data, size_t size, std::vector<uint32_t>& starts,
                   size_t max_lines);

/// Cuts an index from index_lines() back to the lines of data[0, size), where `size` is one of
/// its entries (a line boundary, or the end it was made for).
void trim_line_index(std::vector<uint32_t>& starts, size_t size);

/// The offset just after the `lines`-th '\n' in data[0, size), or `size` when there are fewer.
size_t end_of_lines(const char* data, size_t size, size_t lines);

}  // namespace keyshard
