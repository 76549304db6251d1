// The collector thread of --exec: it reads every child's stderr (passed on with each line
// prefixed by the child's partition) and, with -o -, its stdout: whole lines to keyshard's
// stdout, never torn or interleaved. One thread and poll() serve all children.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "util/files.h"
#include "util/status.h"

namespace keyshard {

class ExecCollector {
 public:
  /// `on_failure` is called from the collector thread when keyshard's stdout closes (with a
  /// quiet Status) or an output fails; the run should stop.
  ExecCollector(size_t max_line_size, std::function<void(Status)> on_failure);
  ~ExecCollector();

  /// Before start(): a child's stdout pipe, copied as whole lines to keyshard's stdout.
  void add_stdout_to_stdout(FileDescriptor reader, std::string label);
  /// Before start(): a child's stderr pipe, passed on line by line as "[label] line".
  void add_stderr(FileDescriptor reader, std::string label);

  void start();
  /// Instead of start(), where no thread can be had: closes every pipe unread, so that a child
  /// that writes to one gets EPIPE (or SIGPIPE) and ends, rather than waits for a reader.
  void discard() { streams_.clear(); }
  /// Waits until every pipe has reached its end (every child has exited or closed them).
  Status join();

 private:
  static constexpr size_t kStderrPiece = 64 * 1024;  // a longer stderr line goes on in pieces

  enum class Target { kStdout, kStderr };
  struct Stream {
    FileDescriptor reader;
    std::string label;
    Target target;
    std::string pending;  // an unfinished line (kStdout, kStderr)
    bool cut = false;     // kStderr: `pending` continues a line already sent in pieces
  };

  void run();
  void deliver(Stream& stream, const char* data, size_t size, bool at_end);
  void deliver_stderr(Stream& stream, std::string_view data, bool at_end);
  void write_stdout(std::string_view text);
  void report(Status status);

  size_t max_line_size_;
  std::function<void(Status)> on_failure_;
  std::vector<Stream> streams_;
  std::thread thread_;
  Status status_;            // written by the collector thread; read after join()
  // Nothing more goes to stdout (it was closed, or a child's line was too long); collector
  // thread only.
  bool stdout_gone_ = false;
};

}  // namespace keyshard
