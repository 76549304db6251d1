// A chunk: a block of whole lines from one input, the unit of work of the pipeline. The reader
// fills the text and finds its lines; a router fills the routing; every partition owner then
// applies it, in sequence order. Chunks are recycled through a fixed pool, which bounds memory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "keys/extraction.h"

namespace keyshard {

class MappedWindow;

/// Where a line goes: a partition number, or one of these.
inline constexpr uint32_t kToBadLine = UINT32_MAX;
inline constexpr uint32_t kToSaltedPending = UINT32_MAX - 1;  // decided by the salt sequencer

struct PendingSalt {
  uint32_t line;  // a line whose key is salted round-robin
  uint32_t salt;  // its --salt entry
};

struct BadLine {
  uint32_t line;  // index of the line within the chunk
  BadReason reason;
  std::string_view detail;  // static text, or text owned by a router (routers live for the run)
};

struct Chunk {
  // Text, written by the reader: `size` bytes at text(). Every line ends with '\n' except
  // possibly the last line of an input that has no final newline. Bytes up to readable_end()
  // (at least kLinePadding past `size`) may be read.
  std::unique_ptr<char[]> data;  // the text when it was read into the chunk
  size_t size = 0;
  size_t capacity = 0;  // usable bytes of `data`, not counting the padding
  // The text when it is read in place: a view of a mapped input file, kept mapped by `window`,
  // with `view_readable` bytes readable from `view`. Null: the text is in `data`.
  const char* view = nullptr;
  size_t view_readable = 0;
  std::shared_ptr<const MappedWindow> window;
  uint64_t sequence = 0;
  uint32_t input = 0;          // index of the input the lines came from
  uint64_t input_offset = 0;   // byte offset of text()[0] within that input (decompressed)
  bool final_fragment = false;  // the input ended without '\n' inside this chunk
  bool checkpoint_after = false;  // a checkpoint is taken once every owner has applied this
  uint32_t interval = 0;          // checkpoints taken before it (heavy-hitter summaries)
  bool input_restarted = false;   // the input is read again from 0: its line count restarts
  // From a pipe that has gone quiet: every owner hands what it holds to its outputs once it has
  // applied this chunk, so that a slow stream is not held back (the chunk may have no lines).
  bool flush_after = false;
  std::vector<uint32_t> line_starts;  // offset of each line; one extra entry: the end

  // Routing, written by one router, then read by every owner.
  std::vector<uint32_t> destinations;  // per line: partition, or kToBadLine
  std::vector<uint32_t> order;          // line indices grouped by partition, input order kept
  std::vector<uint32_t> group_begin;    // partition p's lines are order[group_begin[p]..[p+1])
  std::vector<BadLine> bad_lines;       // in line order
  uint32_t missing_key_routed = 0;      // lines without a key sent to --missing-key partition:P
  std::vector<uint64_t> salted_events;  // per --salt entry: events of that key in this chunk
  std::vector<PendingSalt> pending_salts;  // in line order, for the salt sequencer
  std::vector<uint64_t> key_hashes;  // --hot-keys auto: per line, the key's hash (0: no key)
  std::vector<int32_t> salt_of_line;    // --annotate salt only: the sub-key of line i, or -1
  // With --annotate key only: the key bytes of every line, line i's ending at key_ends[i];
  // keyless[i] is set for an event without a key (sent on by --missing-key partition:P).
  std::string keys;
  std::vector<uint32_t> key_ends;
  std::vector<bool> keyless;
  // Set under --on-bad fail: lines from this index on are not applied, and the run stops.
  uint32_t stop_at_line = UINT32_MAX;

  const char* text() const { return view != nullptr ? view : data.get(); }
  /// How many bytes from text() may be read (the text and what follows it).
  size_t readable_end() const { return view != nullptr ? view_readable : capacity + kLinePadding; }

  size_t line_count() const { return line_starts.empty() ? 0 : line_starts.size() - 1; }

  /// Whether line i is the first of its input (where a byte order mark may come first).
  bool starts_input(size_t i) const { return input_offset + line_starts[i] == 0; }

  /// Line i's key bytes (--annotate key only); empty for a line without a key.
  std::string_view key(size_t i) const {
    const uint32_t begin = i == 0 ? 0 : key_ends[i - 1];
    return std::string_view(keys).substr(begin, key_ends[i] - begin);
  }

  /// Line i without its '\n'.
  std::string_view line(size_t i) const {
    const uint32_t begin = line_starts[i];
    uint32_t end = line_starts[i + 1];
    if (end > begin && text()[end - 1] == '\n') --end;
    return {text() + begin, end - begin};
  }
};

}  // namespace keyshard
