// The partition-owner stage: owner w of W owns partitions p with p % W == w (with -o -, owner 0
// owns the one ordered stdout stream). It applies every chunk in sequence order, appending its
// partitions' lines to per-partition buffers that reach the sinks in large writes. Only its
// worker thread touches it, so the hot path takes no lock. Owner 0 also writes dead letters.
#pragma once

#include <memory>
#include <memory_resource>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/checkpointer.h"
#include "input/chunk.h"
#include "insight/run_stats.h"
#include "pipeline/output_arena.h"
#include "pipeline/run_config.h"
#include "sinks/dead_letter.h"
#include "sinks/exec_collector.h"
#include "sinks/sink.h"
#include "sinks/zstd_sink.h"
#include "util/files.h"

namespace keyshard {

class PartitionOwner {
 public:
  /// `resume`, when given, is the checkpoint this run continues: its outputs are cut back to
  /// the recorded sizes and appended to, and its counters go on. `input_lines` holds the lines
  /// of each input before its starting position.
  PartitionOwner(const RunConfig& config, unsigned index, unsigned count,
                 const Checkpoint* resume = nullptr, std::vector<uint64_t> input_lines = {});

  /// Opens the sinks of the partitions this owner writes, and checks those of a resumed run;
  /// with --exec, opens the children's output files (their stdout and stderr pipes go to
  /// `collector` once start_outputs() starts them).
  Status open(ExecCollector* collector);
  /// After a failed open() or start_outputs() of a fresh run: closes every sink (ending the
  /// children started) and removes the files that open() created (files that were there before
  /// are left), so that a retry finds DIR as it was.
  void remove_created_files();
  const std::vector<std::string>& created_files() const { return created_; }
  /// Once every owner's open() passed: starts the --exec children (after ending the line a
  /// crash cut short in a resumed child's output), and cuts each output of a resumed run back
  /// to its checkpoint (see Sink::cut_back). So a run refused over one output changes none,
  /// not even by a child that writes as its input ends.
  Status start_outputs();
  /// Writes this owner's share of `chunk`. Under --on-bad fail, returns the bad line's error.
  Status apply(const Chunk& chunk);
  /// Hands every buffer to the kernel and reports this owner's part of a checkpoint after the
  /// chunks applied so far (the checkpointer makes them durable).
  Status checkpoint(OwnerCut& cut);
  /// Flushes every buffer and closes every sink (with --exec and --commit sync, fsyncing the
  /// dead-letter file first; other outputs are the pipeline's to sync).
  Status finish();
  /// This owner's part of a checkpoint after finish().
  OwnerCut final_cut() const;
  /// Whether each output file's path still names the file written, as long as what was
  /// written (see Sink::check_in_place): before each checkpoint counts the bytes, and at the end.
  Status check_outputs_in_place();

  const RunStats& stats() const { return stats_; }
  /// Lines of input `input` in the chunks applied so far (and before the run's start).
  uint64_t lines_of_input(uint32_t input) const {
    return input < input_lines_.size() ? input_lines_[input] : 0;
  }

 private:
  /// Room past the flush size in each buffer, for the line that crosses it.
  static constexpr size_t kOutputSlack = 4096;
  /// What each partition buffer reserves (its arena slot holds that and the terminating NUL).
  size_t buffer_bytes() const { return flush_size_ + kOutputSlack; }

  struct Output {
    // The buffer last lent to the sink (Sink::write_lent), in arena_, and the buffer (which
    // flush_outputs() lends too). Declared before the sink, so destroyed after it: the sink's
    // destructor waits until nothing reads them any more.
    std::pmr::string spare;
    std::pmr::string buffer;  // in arena_
    std::unique_ptr<Sink> sink;
    size_t flush_at = 0;  // the buffer is written out once it holds this much
    size_t seen = 0;      // the buffer's first bytes that the sink saw ahead (Sink::see_ahead)
    bool lent = false;    // the sink may still be reading `spare`

    /// Shows the sink the bytes appended since it last saw the buffer, while they are in cache.
    void show_sink() {
      if (buffer.size() > seen) sink->see_ahead(std::string_view(buffer).substr(seen));
      seen = buffer.size();
    }
    /// The same once a chunk's lines are appended, when they come to `at_least` bytes or more
    /// (fewer are left to the write-out, which shows them first).
    void show_sink_after_chunk(size_t at_least) {
      if (buffer.size() - seen >= at_least) show_sink();
    }
    /// After `bytes` were taken off the front of the buffer (written, or dropped on failure).
    void took_front(size_t bytes) { seen = seen > bytes ? seen - bytes : 0; }
  };
  struct DeadLetterOutput {
    std::unique_ptr<Sink> sink;
    std::string buffer;
  };

  bool owns(uint32_t partition) const { return partition % count_ == index_; }
  bool writes_dead_letters() const { return index_ == 0; }
  Output& output_of(uint32_t partition);
  /// An --exec child that open() prepared and start_outputs() starts.
  struct PendingChild {
    std::string label;  // in messages, and its stderr's prefix
    std::vector<std::pair<std::string, std::string>> env;
    FileDescriptor output_file;  // its stdout (none with -o -)
    std::string output_path;
    bool end_line = false;  // the file ends within a line that a crash cut short
  };
  Status open_exec_output(const std::string& label, const std::string& file_name,
                          std::vector<std::pair<std::string, std::string>> env);
  Status start_child(PendingChild& child);
  Status append_event(const Chunk& chunk, uint32_t line, uint32_t partition);
  /// Partition `partition`'s lines order[begin..end) of `chunk`, without --annotate.
  Status append_lines(const Chunk& chunk, uint32_t partition, uint32_t begin, uint32_t end);
  void count_only(const Chunk& chunk);  // stats: the loads, without writing
  Status append_to(Output& output, std::string_view bytes);
  template <class Buffered>
  Status flush(Buffered& output);
  /// A buffer that reached its flush_at: written out up to where its file's size is a
  /// multiple of write_alignment_ (a file_size() sink), so that the page cache takes each write
  /// in whole, large folios; the rest of the line there stays for the next write. A sink that
  /// writes the block past the page cache may read it after it returns: the buffer is then lent
  /// to it, and the rest goes to the spare, which becomes the buffer.
  Status flush_full(Output& output);
  /// Writes out everything the outputs hold (a checkpoint, the end). The whole pages of each
  /// buffer that its sink sends past the page cache go first, for every output, lent; the rest,
  /// through the page cache, only once they are written, as such a write waits for the file's
  /// direct writes: so the outputs' direct writes are under way together. Goes on past a
  /// failure, and returns the first.
  Status flush_outputs();
  /// After a write: flush_at, the bytes from the file's size to the next multiple of
  /// write_alignment_ (flush_size_ for a sink that is not a file it knows the size of).
  void set_flush_point(Output& output) const;
  /// An empty buffer for a new output, in arena_.
  std::pmr::string new_buffer() { return std::pmr::string(arena_.get()); }
  /// Adds the output of the next partition (or the one output) this owner writes, to `sink`,
  /// its buffers in arena_.
  void add_output(std::unique_ptr<Sink> sink);
  Status handle_bad_lines(const Chunk& chunk);
  Status write_long_dead_letter(const DeadLetter& letter);  // to standard error
  Status sync_dead_letters();  // --commit sync: fsync the dead-letter file (with --exec)
  Status open_partition_file(uint32_t partition, std::unique_ptr<Sink>& sink);
  bool tracks_outputs() const { return config_.checkpoints && !config_.exec(); }
  void note_if_new(const std::string& path);  // before open() creates `path`

  const RunConfig& config_;
  unsigned index_;
  unsigned count_;
  size_t flush_size_;
  size_t write_alignment_;  // the largest power of two up to flush_size_
  std::unique_ptr<OutputArena> arena_;  // the outputs' buffers (made before, gone after them)
  std::vector<Output> outputs_;      // partition p's is outputs_[p / count_], or the one output
                                     // (-o - without --exec, or --exec-per worker)
  std::vector<PendingChild> children_;  // between open() and start_outputs()
  ExecCollector* collector_ = nullptr;  // gets the children's stdout (-o -) and stderr
  DeadLetterOutput dead_letters_;    // owner 0 only
  std::unique_ptr<ZstdContext> zstd_;
  RunStats stats_;
  const Checkpoint* resume_;
  std::vector<std::string> created_;  // files open() created (not those it truncated)
  std::vector<uint64_t> input_lines_;  // per input: lines in the chunks applied so far
  uint64_t lines_before_ = 0;          // lines of the current input in earlier chunks
  std::string annotated_;            // scratch for one annotated line
};

}  // namespace keyshard
