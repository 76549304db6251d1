#include "sinks/exec_collector.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace keyshard {

ExecCollector::ExecCollector(size_t max_line_size, std::function<void(Status)> on_failure)
    : max_line_size_(max_line_size), on_failure_(std::move(on_failure)) {}

ExecCollector::~ExecCollector() {
  if (thread_.joinable()) thread_.join();
}

void ExecCollector::add_stdout_to_stdout(FileDescriptor reader, std::string label) {
  streams_.push_back(Stream{std::move(reader), std::move(label), Target::kStdout, {}});
}

void ExecCollector::add_stderr(FileDescriptor reader, std::string label) {
  streams_.push_back(Stream{std::move(reader), std::move(label), Target::kStderr, {}});
}

void ExecCollector::start() { thread_ = std::thread([this] { run(); }); }

Status ExecCollector::join() {
  if (thread_.joinable()) thread_.join();
  return status_;
}

void ExecCollector::report(Status status) {
  if (status_.ok()) status_ = status;
  on_failure_(std::move(status));
}

void ExecCollector::write_stdout(std::string_view text) {
  if (stdout_gone_) return;
  int error_number = 0;
  Status status = write_all(STDOUT_FILENO, text, "<stdout>", &error_number);
  if (status.ok()) return;
  stdout_gone_ = true;
  report(error_number == EPIPE ? Status::quiet_stop() : status);
}

void ExecCollector::deliver(Stream& stream, const char* data, size_t size, bool at_end) {
  if (stream.target == Target::kStderr) {
    deliver_stderr(stream, std::string_view(data, size), at_end);
    return;
  }
  if (stdout_gone_) return;  // (the run stops: nothing more is kept or reported)
  // `pending` holds no newline (it is cut after its last one each time): the last newline is
  // looked for among the new bytes only, so a long line costs its length, not its square.
  const size_t before = stream.pending.size();
  stream.pending.append(data, size);
  const auto* last = static_cast<const char*>(size > 0 ? ::memrchr(data, '\n', size) : nullptr);
  size_t cut = last != nullptr ? before + static_cast<size_t>(last - data) + 1 : 0;
  if (at_end && cut < stream.pending.size()) {
    stream.pending.push_back('\n');  // a last line without a newline is still a whole line
    cut = stream.pending.size();
  }
  if (cut == 0 && stream.pending.size() > max_line_size_) {
    report(Status::error("a line of its output is longer than --max-line-size", stream.label)
               .because(Cause::kLineTooLong));
    // The run stops: nothing more reaches stdout, neither a piece of that line nor another
    // child's lines after it, which stays whole lines.
    stream.pending.clear();
    stdout_gone_ = true;
    return;
  }
  if (cut == 0) return;
  write_stdout(std::string_view(stream.pending.data(), cut));
  stream.pending.erase(0, cut);
}

void ExecCollector::deliver_stderr(Stream& stream, std::string_view data, bool at_end) {
  // Each line gets the child's label and is written whole, so lines never mix. A line longer
  // than kStderrPiece goes on in pieces of exactly that size, each a line of its own: memory
  // stays bounded, and a message is not data.
  std::string text;
  const auto send = [&] {
    text += "[" + stream.label + "] ";
    text += stream.pending;
    text += '\n';
    stream.pending.clear();
  };
  while (!data.empty()) {
    const auto* newline = static_cast<const char*>(::memchr(data.data(), '\n', data.size()));
    size_t line_bytes = newline != nullptr ? static_cast<size_t>(newline - data.data())
                                           : data.size();
    while (line_bytes > 0) {
      const size_t taken = std::min(line_bytes, kStderrPiece - stream.pending.size());
      stream.pending.append(data.data(), taken);
      data.remove_prefix(taken);
      line_bytes -= taken;
      if (stream.pending.size() == kStderrPiece) {
        send();
        stream.cut = true;
      }
    }
    if (newline == nullptr) break;
    data.remove_prefix(1);
    // A line that ended right where its last piece did has been sent whole already.
    if (!stream.pending.empty() || !stream.cut) send();
    stream.cut = false;
  }
  if (at_end && !stream.pending.empty()) send();  // a last line without a newline
  if (!text.empty()) (void)write_all(STDERR_FILENO, text, "<stderr>");
}

void ExecCollector::run() {
  std::vector<char> buffer(1 << 16);
  std::vector<pollfd> polled;
  std::vector<size_t> which;
  for (;;) {
    polled.clear();
    which.clear();
    for (size_t i = 0; i < streams_.size(); ++i) {
      if (!streams_[i].reader.valid()) continue;
      polled.push_back(pollfd{streams_[i].reader.get(), POLLIN, 0});
      which.push_back(i);
    }
    if (polled.empty()) break;
    if (::poll(polled.data(), polled.size(), -1) < 0) {
      if (errno == EINTR) continue;
      report(Status::error("poll failed: " + errno_text(errno)));
      break;
    }
    for (size_t k = 0; k < polled.size(); ++k) {
      Stream& stream = streams_[which[k]];
      if (polled[k].revents == 0 || !stream.reader.valid()) continue;
      const long got = read_some(stream.reader.get(), buffer.data(), buffer.size());
      if (got > 0) {
        deliver(stream, buffer.data(), static_cast<size_t>(got), false);
      } else {
        deliver(stream, buffer.data(), 0, true);
        stream.reader = FileDescriptor();
      }
    }
    if (stdout_gone_) {
      // Nothing more reaches keyshard's stdout: the children's stdout pipes close, so that a
      // child still writing ends by SIGPIPE, as in a shell pipeline, rather than run on.
      for (Stream& stream : streams_) {
        if (stream.target == Target::kStdout) stream.reader = FileDescriptor();
      }
    }
  }
}

}  // namespace keyshard
