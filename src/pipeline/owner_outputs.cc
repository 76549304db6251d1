// Where each partition's output is opened, before the first chunk is applied: a file (plain or
// zstd), an --exec child's input (its output straight into a file, or through keyshard), or
// standard output; and the dead-letter sink. A resumed run reopens what the checkpoint records.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <exception>
#include <iterator>

#include "pipeline/partition_owner.h"
#include "sinks/child_process.h"
#include "sinks/exec_sink.h"
#include "sinks/file_sink.h"
#include "sinks/overlap_checks.h"
#include "util/files.h"
#include "util/json_text.h"

namespace keyshard {
namespace {

// Whether the end of an --exec output, `tail`, is text: UTF-8 without NUL bytes (a character
// cut at either end of the window, or at the end by a crash, does not count against it).
// Compressed or other binary output is not: 4 KiB of it is never valid UTF-8.
bool looks_like_text(std::string_view tail) {
  auto continuation = [](char byte) { return (static_cast<unsigned char>(byte) & 0xc0) == 0x80; };
  for (int i = 0; i < 3 && !tail.empty() && continuation(tail.front()); ++i) tail.remove_prefix(1);
  for (size_t back = 1; back <= 3 && back <= tail.size(); ++back) {
    const auto byte = static_cast<unsigned char>(tail[tail.size() - back]);
    if ((byte & 0xc0) == 0x80) continue;  // a continuation byte: look further back
    const size_t length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    if (length > back) tail.remove_suffix(back);  // a character the crash cut short
    break;
  }
  return tail.find('\0') == std::string_view::npos && is_valid_utf8(tail);
}

struct NameTooLong {};

// Appends to a string, and gives up (throws) once it holds more than a file name may: a --name
// width of a billion is not written out, not even to be thrown away.
class CappedAppender {
 public:
  using iterator_category = std::output_iterator_tag;
  using value_type = void;
  using difference_type = std::ptrdiff_t;
  using pointer = void;
  using reference = void;

  explicit CappedAppender(std::string& out) : out_(&out) {}
  CappedAppender& operator=(char byte) {
    if (out_->size() <= kMaxFileNameBytes) {
      out_->push_back(byte);
    } else if (std::uncaught_exceptions() == 0) {
      // (Not while another exception unwinds: fmt copies out what it holds as it does.)
      throw NameTooLong{};
    }
    return *this;
  }
  CappedAppender& operator*() { return *this; }
  CappedAppender& operator++() { return *this; }
  CappedAppender operator++(int) { return *this; }

 private:
  std::string* out_;
};

}  // namespace

std::string partition_file_name(const RunConfig& config, uint32_t partition) {
  std::string name;
  try {
    fmt::format_to(CappedAppender(name), fmt::runtime(config.name_template),
                   fmt::arg("partition", partition), fmt::arg("partitions", config.partitions));
  } catch (const NameTooLong&) {
    // (cut: longer than a file name may be, which --name's check refuses)
  }
  if (config.zstd_level) name += ".zst";
  return name;
}

std::string worker_file_name(unsigned worker) {
  return fmt::format("worker-{:05}.ndjson", worker);
}
Status PartitionOwner::open_exec_output(const std::string& label, const std::string& file_name,
                                        std::vector<std::pair<std::string, std::string>> env) {
  // The child's stdout: straight into its output file, which the child writes itself (what it
  // wrote survives a crash of keyshard); with -o -, a pipe the collector copies to stdout.
  // (--compress does not go with --exec: split_config.cc.) The child starts later, in
  // start_outputs(), once every output passed its checks.
  PendingChild child;
  child.label = label;
  child.env = std::move(env);
  const std::string path = config_.output_dir + "/" + file_name;
  // A resumed run appends to what the children wrote before (at-least-once, see the man page).
  const int mode = resume_ ? O_APPEND : O_TRUNC;
  if (!config_.to_stdout) note_if_new(path);
  if (!config_.to_stdout) {
    if (Status status =
            open_regular_output(path, O_RDWR | O_CREAT | mode | O_CLOEXEC, child.output_file);
        !status) {
      return status;
    }
    if (resume_ && !resume_->exec_settled) {
      // A crash may have cut a child's input mid-line, and a child such as `cat` then ends its
      // output within that line: the new child starts a new line. Output that is not text
      // (gzip's, say) is left as it is, and so is every output after an orderly end.
      const int fd = child.output_file.get();
      struct stat info {};
      std::string tail(4096, '\0');
      const off_t size = ::fstat(fd, &info) == 0 ? info.st_size : 0;
      const off_t from = std::max<off_t>(0, size - static_cast<off_t>(tail.size()));
      const long got = size > 0 ? read_at(fd, tail.data(), static_cast<size_t>(size - from),
                                          static_cast<uint64_t>(from))
                                : 0;
      tail.resize(got > 0 ? static_cast<size_t>(got) : 0);
      child.end_line = !tail.empty() && tail.back() != '\n' && looks_like_text(tail);
    }
    child.output_path = path;
  }
  children_.push_back(std::move(child));
  return {};
}

Status PartitionOwner::start_child(PendingChild& child) {
  if (child.end_line) {
    if (Status status = write_all(child.output_file.get(), "\n", child.output_path); !status) {
      return status;
    }
  }
  child.env.emplace_back("KEYSHARD_PARTITIONS", std::to_string(config_.partitions));
  child.env.emplace_back("KEYSHARD_HASH", std::string(hash_name(config_.hash)));
  pid_t pid = 0;
  ChildStreams streams;
  const int output = child.output_file.valid() ? child.output_file.get() : -1;
  if (Status status = spawn_shell(config_.exec_command, child.env, output, pid, streams);
      !status) {
    return Status::error(status.reason(), child.label);
  }
  if (config_.to_stdout) {
    collector_->add_stdout_to_stdout(std::move(streams.stdout_reader), child.label);
  }
  collector_->add_stderr(std::move(streams.stderr_reader), child.label);
  add_output(std::make_unique<ExecSink>(child.label, config_.exec_command, pid,
                                        std::move(streams.stdin_writer),
                                        config_.allow_early_exit));
  return {};
}

Status PartitionOwner::open(ExecCollector* collector) {
  if (config_.dry_run) return {};
  collector_ = collector;
  if (config_.zstd_level && !config_.exec()) {
    zstd_ = std::make_unique<ZstdContext>(*config_.zstd_level);
  }
  // One slot per partition this owner writes (one for a single output).
  const size_t owned = config_.partitions > index_
                           ? (config_.partitions - index_ + count_ - 1) / count_ : 1;
  // (Two slots an output: its buffer and the spare, used by a file written past the page cache.)
  arena_ = std::make_unique<OutputArena>(2 * owned, buffer_bytes() + 1);
  auto wrap = [this](std::unique_ptr<Sink> sink) {
    return zstd_ ? make_zstd_sink(std::move(sink), zstd_.get()) : std::move(sink);
  };
  if (config_.exec() && config_.exec_per_worker) {
    const std::string label = "worker " + std::to_string(index_);
    if (Status status = open_exec_output(
            label, worker_file_name(index_),
            {{"KEYSHARD_WORKER", std::to_string(index_)},
             {"KEYSHARD_WORKERS", std::to_string(count_)}});
        !status) {
      return status;
    }
  } else if (config_.exec()) {
    for (uint32_t p = index_; p < config_.partitions; p += count_) {
      if (Status status = open_exec_output("partition " + std::to_string(p),
                                           partition_file_name(config_, p),
                                           {{"KEYSHARD_PARTITION", std::to_string(p)}});
          !status) {
        return status;
      }
    }
  } else if (config_.to_stdout) {
    if (index_ == 0) {
      add_output(wrap(make_stdout_sink()));
    }
  } else {
    for (uint32_t p = index_; p < config_.partitions; p += count_) {
      std::unique_ptr<Sink> sink;
      if (Status status = open_partition_file(p, sink); !status) return status;
      add_output(wrap(std::move(sink)));
    }
  }
  if (writes_dead_letters() && config_.on_bad == BadLinePolicy::kDeadLetter) {
    const std::string& path = config_.dead_letter_path;
    Status status;
    if (path.empty() || (!config_.checkpoints && is_standard_error_file(path))) {
      // (/dev/stderr into `2>> run.log`: appended through standard error, as keyshard's own
      // messages are, rather than opened again, which would truncate the log.)
      dead_letters_.sink = make_stderr_sink();
    } else if (resume_ && config_.checkpoints) {
      status = reopen_file_sink(path, resume_->dead_letter.value_or(OutputState{}),
                                resume_->complete, dead_letters_.sink);
    } else {
      note_if_new(path);
      status = open_file_sink(path, dead_letters_.sink, config_.checkpoints);
    }
    if (!status) return status;
  }
  return {};
}

Status PartitionOwner::open_partition_file(uint32_t partition, std::unique_ptr<Sink>& sink) {
  const std::string path = config_.output_dir + "/" + partition_file_name(config_, partition);
  if (resume_ && tracks_outputs()) {
    // A checkpoint records every partition; a zstd file is cut at a frame boundary.
    return reopen_file_sink(path, resume_->outputs.at(partition), resume_->complete, sink,
                            config_.commit_sync, config_.commit_sync && !config_.zstd_level);
  }
  note_if_new(path);
  const bool sync = tracks_outputs() && config_.commit_sync;
  return open_file_sink(path, sink, tracks_outputs(), sync, sync && !config_.zstd_level);
}

void PartitionOwner::add_output(std::unique_ptr<Sink> sink) {
  outputs_.push_back(Output{new_buffer(), new_buffer(), std::move(sink)});
  outputs_.back().buffer.reserve(buffer_bytes());
  set_flush_point(outputs_.back());
}

Status PartitionOwner::start_outputs() {
  for (PendingChild& child : children_) {
    if (Status status = start_child(child); !status) return status;
  }
  children_.clear();  // (their output files are the children's now)
  for (Output& output : outputs_) {
    if (Status status = output.sink->cut_back(); !status) return status;
  }
  return dead_letters_.sink ? dead_letters_.sink->cut_back() : Status{};
}

void PartitionOwner::note_if_new(const std::string& path) {
  struct stat info {};
  if (resume_ == nullptr && ::lstat(path.c_str(), &info) != 0 && errno == ENOENT) {
    created_.push_back(path);
  }
}

void PartitionOwner::remove_created_files() {
  outputs_.clear();  // closes the files (and the --exec children's input)
  children_.clear();  // and the output files of children not started
  dead_letters_.sink.reset();
  for (const std::string& path : created_) (void)::unlink(path.c_str());
  created_.clear();
}

}  // namespace keyshard
