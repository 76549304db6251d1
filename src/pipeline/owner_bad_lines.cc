// Where the bad lines of a chunk go (--on-bad), in the owner that writes them (owner 0: see
// writes_dead_letters()): each is counted by its reason, then written as a dead-letter record
// (to the dead-letter file, or to standard error), or counted as skipped; under fail, apply()
// reports the first. The records are buffered, and flushed by each checkpoint with the outputs.
#include <cerrno>
#include <string_view>

#include "pipeline/partition_owner.h"
#include "sinks/dead_letter.h"
#include "util/files.h"
#include "util/stderr_lines.h"

namespace keyshard {
namespace {

constexpr size_t kDeadLetterFlush = 64u << 10;

// Whether the first byte of `line` other than blanks opens an object: a line meant as one, if
// it is invalid (see warn_if_no_line_has_the_key()).
bool begins_as_object(std::string_view line) {
  const size_t first = line.find_first_not_of(" \t\r");
  return first != std::string_view::npos && line[first] == '{';
}

}  // namespace

Status PartitionOwner::handle_bad_lines(const Chunk& chunk) {
  for (const BadLine& bad : chunk.bad_lines) {
    ++stats_.bad_by_reason[static_cast<int>(bad.reason)];
    if (bad.reason == BadReason::kInvalidJson && begins_as_object(chunk.line(bad.line))) {
      ++stats_.invalid_objects;
    }
    if (config_.on_bad == BadLinePolicy::kFail) break;  // reported by apply()
    if (config_.on_bad == BadLinePolicy::kSkip || config_.dry_run) {
      ++stats_.skipped;
      continue;
    }
    ++stats_.dead_lettered;
    const DeadLetter letter{config_.input_names[chunk.input], lines_before_ + bad.line + 1,
                            chunk.input_offset + chunk.line_starts[bad.line], bad.reason,
                            bad.detail, chunk.line(bad.line)};
    if (config_.dead_letter_path.empty()) {
      // On standard error each record is written whole, between updates of the progress line;
      // a long line's record a piece at a time, holding standard error meanwhile.
      if (letter.text.size() < kDeadLetterFlush) {
        append_dead_letter(dead_letters_.buffer, letter);
      } else if (Status status = write_long_dead_letter(letter); !status) {
        return status;
      }
    } else if (Status status = append_dead_letter(
                   dead_letters_.buffer, letter, kDeadLetterFlush,
                   [this](std::string&) { return flush(dead_letters_); });
               !status) {
      return status;
    }
    if (dead_letters_.buffer.size() >= kDeadLetterFlush) {
      if (Status status = flush(dead_letters_); !status) return status;
    }
  }
  return {};
}

Status PartitionOwner::write_long_dead_letter(const DeadLetter& letter) {
  if (Status status = flush(dead_letters_); !status) return status;  // the records before it
  StderrRecordWriter record;
  auto write_out = [&record](std::string& out) {
    const bool written = record.write(out);
    out.clear();
    return written ? Status{} : Status::error("write failed: " + errno_text(errno), "<stderr>");
  };
  if (Status status = append_dead_letter(dead_letters_.buffer, letter, kDeadLetterFlush, write_out);
      !status) {
    dead_letters_.buffer.clear();
    return status;
  }
  return write_out(dead_letters_.buffer);
}

Status PartitionOwner::sync_dead_letters() {
  if (!config_.commit_sync || !dead_letters_.sink) return {};
  return dead_letters_.sink->sync();
}

}  // namespace keyshard
