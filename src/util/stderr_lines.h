// Standard error is shared by the progress line, which redraws itself in place, and by what
// is written there while it shows (dead letters under -o -, warnings). Whatever writes a
// record first clears a progress line that is showing, so that no record is glued to it.
#pragma once

#include <string_view>

namespace keyshard {

/// Writes `line` as the status line, in place of the one before ("\r", clear, `line`); when
/// standard error is not a terminal, as a line of its own.
void draw_status_line(std::string_view line);

/// Clears a status line that is showing.
void clear_status_line();

/// Writes `text` (whole lines) to standard error, first clearing a status line that is
/// showing. False when the write failed (errno tells why).
bool write_stderr_record(std::string_view text);

}  // namespace keyshard
