// Errors are values until main: a stage that fails returns a Status naming the file, the line
// (when there is one), the reason and the exit code; only main prints it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/stderr_lines.h"

namespace keyshard {

/// Exit codes of keyshard (see the man page, EXIT STATUS).
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,     // I/O error, child failure, other runtime failure
  kExitUsage = 2,       // bad command line
  kExitTooManyBad = 3,  // more bad lines than --max-bad (the run finished, checkpoint written)
  kExitSkewed = 4,      // skew above --max-skew (the run finished, checkpoint written)
  kExitBadInput = 65,   // a bad line under --on-bad fail
  kExitLocked = 75,     // another run holds the output directory's lock
  kExitInterrupted = 128,  // plus the signal: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP
};

/// What kind of failure a Status is, where advice depends on it (run_report.cc).
enum class Cause : uint8_t {
  kOther,
  kInputChanged,  // an input is not what the checkpoint recorded (resume needs that very input)
  kLineTooLong,   // a line longer than --max-line-size (raising it means starting over)
  kOutputChanged,  // an output is not what the checkpoint recorded (removed, cut or changed)
  kLockLost,       // DIR's lock file was removed while held: another run may write there too
  kNotText,        // an input that is no text keyshard reads (gzip, zip, UTF-16...), at its start
};

/// `text` with its control bytes shown as escapes (\n, \t, \x1b): a file name in a
/// message stays on its line and sends nothing to the terminal.
inline std::string visible_controls(std::string_view text) {
  std::string shown;
  shown.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x20 && byte != 0x7f) {
      shown += text[i];
    } else if (byte == '\n' || byte == '\t' || byte == '\r') {
      shown += byte == '\n' ? "\\n" : byte == '\t' ? "\\t" : "\\r";
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      shown += "\\x";
      shown += kHex[byte >> 4];
      shown += kHex[byte & 15];
    }
  }
  return shown;
}

class Status {
 public:
  Status() = default;

  /// A failure: printed by main as "keyshard: <where>: <reason>" or "keyshard: <reason>".
  static Status error(std::string reason, std::string where = {}, int exit_code = kExitFailure) {
    Status status;
    status.failed_ = true;
    status.reason_ = std::move(reason);
    status.where_ = std::move(where);
    status.exit_code_ = exit_code;
    return status;
  }

  /// Stops the run without a message and with status 0: the reader of stdout has gone away.
  static Status quiet_stop() {
    Status status;
    status.failed_ = true;
    status.exit_code_ = kExitOk;
    return status;
  }

  /// A failure the command has reported already, in its own way: no message, `exit_code`.
  static Status reported(int exit_code) {
    Status status;
    status.failed_ = true;
    status.exit_code_ = exit_code;
    return status;
  }

  /// Adds a line to the message, after it: "keyshard: <line>" (how to go on, say).
  Status also(std::string line) && {
    more_lines_.push_back(std::move(line));
    return std::move(*this);
  }

  /// Marks the kind of failure; returns the status.
  Status because(Cause cause) && {
    cause_ = cause;
    return std::move(*this);
  }
  Cause cause() const { return cause_; }

  bool ok() const { return !failed_; }
  bool quiet() const { return failed_ && reason_.empty() && more_lines_.empty(); }
  explicit operator bool() const { return ok(); }
  const std::string& reason() const { return reason_; }
  const std::string& where() const { return where_; }
  int exit_code() const { return exit_code_; }

  /// The whole message as main prints it, without the first line's "keyshard: " prefix (control
  /// bytes shown as escapes: whatever a name holds, each line is one that keyshard wrote).
  std::string message() const {
    std::string shown = visible_controls(reason_);
    if (!where_.empty()) shown = visible_controls(where_) + ": " + shown;
    for (const std::string& line : more_lines_) shown += "\nkeyshard: " + visible_controls(line);
    return shown;
  }

 private:
  bool failed_ = false;
  int exit_code_ = kExitOk;
  Cause cause_ = Cause::kOther;
  std::string reason_;
  std::string where_;
  std::vector<std::string> more_lines_;
};

/// Memory that ran out in a stage of a run (std::bad_alloc caught there): a failure like any
/// other, so that the run ends in order and says how to go on.
inline Status out_of_memory() {
  return Status::error("out of memory (is a limit such as ulimit -v lower than the run needs? "
                       "each line, up to --max-line-size, is held whole)");
}

/// "keyshard: warning: <message>" on stderr, even with -q: a warning says some input was not
/// read as asked, which a cron job's mail must show.
inline void print_warning(const std::string& message) {
  (void)write_stderr_record("keyshard: warning: " + visible_controls(message) + "\n");
}

}  // namespace keyshard
