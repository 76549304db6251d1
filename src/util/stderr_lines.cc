#include "util/stderr_lines.h"

#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <string>

namespace keyshard {
namespace {

std::mutex& stderr_mutex() {
  static std::mutex mutex;
  return mutex;
}
bool status_shown = false;  // guarded by stderr_mutex()

bool write_whole(std::string_view text) {
  while (!text.empty()) {
    const ssize_t wrote = ::write(STDERR_FILENO, text.data(), text.size());
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return false;
    text.remove_prefix(static_cast<size_t>(wrote));
  }
  return true;
}

constexpr std::string_view kClear = "\r\x1b[K";

bool stderr_is_terminal() {
  static const bool terminal = ::isatty(STDERR_FILENO) == 1;
  return terminal;
}

}  // namespace

void draw_status_line(std::string_view line) {
  std::lock_guard lock(stderr_mutex());
  if (!stderr_is_terminal()) {  // a file or a pipe: one line per update, nothing to redraw
    (void)write_whole(std::string(line) + "\n");
    return;
  }
  std::string text(kClear);
  text += line;
  (void)write_whole(text);
  status_shown = true;
}

bool status_line_redraws() { return stderr_is_terminal(); }

void clear_status_line() {
  std::lock_guard lock(stderr_mutex());
  if (status_shown) (void)write_whole(kClear);
  status_shown = false;
}

namespace {

// With stderr_mutex() held: the record takes the line; the next draw puts the status back.
bool clear_for_record() {
  if (!status_shown) return true;
  status_shown = false;
  return write_whole(kClear);
}

}  // namespace

bool write_stderr_record(std::string_view text) {
  std::lock_guard lock(stderr_mutex());
  return clear_for_record() && write_whole(text);
}

StderrRecordWriter::StderrRecordWriter() : lock_(stderr_mutex()), cleared_(clear_for_record()) {}

bool StderrRecordWriter::write(std::string_view piece) { return cleared_ && write_whole(piece); }

}  // namespace keyshard
