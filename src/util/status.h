// Errors are values until main: a stage that fails returns a Status naming the file, the line
// (when there is one), the reason and the exit code; only main prints it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
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

/// `text` with its control characters shown as escapes (\n, \t, \x1b; \xc2\x9b for U+009B, a C1
/// control, and \x9b for such a byte that is no part of a UTF-8 character): a file name in a
/// message stays on its line and sends nothing to the terminal.
inline std::string visible_controls(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string shown;
  shown.reserve(text.size());
  auto escape = [&shown](unsigned char byte) {
    shown += "\\x";
    shown += kHex[byte >> 4];
    shown += kHex[byte & 15];
  };
  auto continuation = [&text](size_t at) {
    return at < text.size() && (static_cast<unsigned char>(text[at]) & 0xc0) == 0x80;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte == '\n' || byte == '\t' || byte == '\r') {
      shown += byte == '\n' ? "\\n" : byte == '\t' ? "\\t" : "\\r";
    } else if (byte < 0x20 || byte == 0x7f) {
      escape(byte);
    } else if (byte == 0xc2 && continuation(i + 1) &&
               static_cast<unsigned char>(text[i + 1]) < 0xa0) {  // U+0080..U+009F
      escape(byte);
      escape(static_cast<unsigned char>(text[++i]));
    } else if (byte < 0x80 || byte >= 0xc0) {
      shown += text[i];
      // (A lead byte's continuation bytes go with it: 0x9b in "\xc4\x9b", U+011B, is none.)
      const size_t more = byte < 0xc0 ? 0 : byte < 0xe0 ? 1 : byte < 0xf0 ? 2 : 3;
      for (size_t k = 0; k < more && continuation(i + 1); ++k) shown += text[++i];
    } else if (byte < 0xa0) {
      escape(byte);  // a lone byte of the C1 range (8-bit terminals take 0x9b for CSI)
    } else {
      shown += text[i];
    }
  }
  return shown;
}

class Status {
 public:
  Status() = default;
  Status(const Status& other)
      : detail_(other.detail_ ? std::make_unique<Detail>(*other.detail_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) *this = Status(other);
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  ~Status() = default;

  /// A failure: printed by main as "keyshard: <where>: <reason>" or "keyshard: <reason>".
  static Status error(std::string reason, std::string where = {}, int exit_code = kExitFailure) {
    Status status;
    Detail& detail = status.detail();
    detail.failed = true;
    detail.reason = std::move(reason);
    detail.where = std::move(where);
    detail.exit_code = exit_code;
    return status;
  }

  /// Stops the run without a message and with status 0: the reader of stdout has gone away.
  static Status quiet_stop() {
    Status status;
    status.detail().failed = true;
    return status;
  }

  /// A failure the command has reported already, in its own way: no message, `exit_code`.
  static Status reported(int exit_code) {
    Status status;
    status.detail().failed = true;
    status.detail().exit_code = exit_code;
    return status;
  }

  /// Adds a line to the message, after it: "keyshard: <line>" (how to go on, say).
  Status also(std::string line) && {
    detail().more_lines.push_back(std::move(line));
    return std::move(*this);
  }

  /// Marks the kind of failure; returns the status.
  Status because(Cause cause) && {
    detail().cause = cause;
    return std::move(*this);
  }
  Cause cause() const { return detail_ ? detail_->cause : Cause::kOther; }

  bool ok() const { return !detail_ || !detail_->failed; }
  bool quiet() const { return !ok() && detail_->reason.empty() && detail_->more_lines.empty(); }
  explicit operator bool() const { return ok(); }
  const std::string& reason() const { return detail_ ? detail_->reason : empty(); }
  const std::string& where() const { return detail_ ? detail_->where : empty(); }
  int exit_code() const { return detail_ ? detail_->exit_code : kExitOk; }

  /// The whole message as main prints it, without the first line's "keyshard: " prefix (control
  /// bytes shown as escapes: whatever a name holds, each line is one that keyshard wrote).
  std::string message() const {
    if (!detail_) return {};
    std::string shown = visible_controls(detail_->reason);
    if (!detail_->where.empty()) shown = visible_controls(detail_->where) + ": " + shown;
    for (const std::string& line : detail_->more_lines) {
      shown += "\nkeyshard: " + visible_controls(line);
    }
    return shown;
  }

 private:
  // A status that says nothing (success, the common case) holds no detail: it is one null
  // pointer, made and dropped by every step of the hot path at no cost.
  struct Detail {
    bool failed = false;
    int exit_code = kExitOk;
    Cause cause = Cause::kOther;
    std::string reason;
    std::string where;
    std::vector<std::string> more_lines;
  };
  Detail& detail() {
    if (!detail_) detail_ = std::make_unique<Detail>();
    return *detail_;
  }
  static const std::string& empty() {
    static const std::string nothing;
    return nothing;
  }

  std::unique_ptr<Detail> detail_;
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
