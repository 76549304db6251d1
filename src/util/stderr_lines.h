// Standard error is shared by the progress line, which redraws itself in place, and by what
// is written there while it shows (dead letters under -o -, warnings). Whatever writes a
// record first clears a progress line that is showing, so that no record is glued to it.
#pragma once

#include <mutex>
#include <string_view>

namespace keyshard {

/// Writes `line` as the status line, in place of the one before ("\r", clear, `line`); when
/// standard error is not a terminal, as a line of its own.
void draw_status_line(std::string_view line);

/// Clears a status line that is showing.
void clear_status_line();

/// Whether the status line is redrawn in place (standard error is a terminal), rather than
/// written as a line of its own each time.
bool status_line_redraws();

/// Writes `text` (whole lines) to standard error, first clearing a status line that is
/// showing. False when the write failed (errno tells why).
bool write_stderr_record(std::string_view text);

/// One record written to standard error a piece at a time (a long line's dead letter): while
/// it lives, nothing else is written there, neither the status line nor another record.
class StderrRecordWriter {
 public:
  StderrRecordWriter();  // clears a status line that is showing
  StderrRecordWriter(const StderrRecordWriter&) = delete;
  StderrRecordWriter& operator=(const StderrRecordWriter&) = delete;

  /// False when the write failed (errno tells why).
  bool write(std::string_view piece);

 private:
  std::unique_lock<std::mutex> lock_;
  bool cleared_;
};

}  // namespace keyshard
