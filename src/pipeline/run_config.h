// The immutable description of one split run, produced by the command line layer after every
// default and conflict is resolved. The pipeline reads it and never changes it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hash/partitioner.h"
#include "keys/key_extractor.h"

namespace keyshard {

enum class BadLinePolicy { kDeadLetter, kSkip, kFail };

struct RunConfig {
  // Input
  std::vector<std::string> inputs;       // paths in order; "-" is stdin
  std::vector<std::string> input_names;  // for messages: the path, or "<stdin>"
  size_t carried_inputs = 0;  // the first ones are only carried over (--incremental): not read
  size_t chunk_size = 1 << 20;
  size_t max_line_size = 64u << 20;

  // Keys and partitioning
  KeySpec keys;
  HashKind hash = HashKind::kMurmur2;
  uint32_t partitions = 1;
  unsigned threads = 1;

  // Hot keys: each salted key is spread over its number of sub-keys (see salted_key()).
  std::vector<std::pair<std::string, uint32_t>> salts;
  std::optional<KeyPath> salt_by;  // the sub-key comes from a hash of this field, not the position
  std::optional<double> hot_keys_share;  // --hot-keys auto[:SHARE]: salt keys above this share
  uint64_t hot_keys_warmup = 10000;      // ... once this many events have been seen

  // Output
  bool to_stdout = false;
  std::string output_dir;
  std::string name_template = "part-{partition:05}.ndjson";
  std::optional<int> zstd_level;  // set: compress outputs with zstd at this level
  bool annotate_partition = false;
  bool annotate_offset = false;
  bool annotate_key = false;
  bool annotate_salt = false;
  bool force = false;

  // Processing: a child process per partition (or per worker) instead of writing directly
  std::string exec_command;  // empty: no --exec
  bool exec_per_worker = false;
  bool allow_early_exit = false;

  // Bad lines
  BadLinePolicy on_bad = BadLinePolicy::kDeadLetter;
  std::optional<uint32_t> missing_key_partition;
  std::string dead_letter_path;  // empty with to_stdout: records go to stderr

  // Checkpoints (with -o DIR): a consistent cut every so many bytes of input or seconds
  bool checkpoints = false;
  uint64_t checkpoint_every_bytes = 64u << 20;  // 0: not by size (--checkpoint-every auto, the
                                                // default, sets sync_ahead_bytes(partitions))
  double checkpoint_every_seconds = 0;          // 0: not by time
  double checkpoint_least_seconds = 0;  // by size, not sooner than this after the last one
                                        // (--checkpoint-every auto: kAutoCheckpointSeconds)
  bool commit_sync = true;   // fsync the outputs before each checkpoint that covers them
                             // (and, between checkpoints further apart, every
                             // sync_ahead_bytes(): see sync_ahead_due())
  bool incremental = false;  // continue every input from its recorded offset; hold back a
                             // last line without '\n'
  // Guardrails: a run that crosses them ends with kExitTooManyBad / kExitSkewed
  std::optional<uint64_t> max_bad_lines;
  std::optional<double> max_bad_share;
  std::optional<double> max_skew;

  // Reporting
  bool quiet = false;
  bool dry_run = false;  // stats: route and count everything, write nothing
  bool progress = false;  // draw the progress line on stderr
  bool verbose = false;   // -v: per-stage timings in the summary

  bool annotate() const {
    return annotate_partition || annotate_offset || annotate_key || annotate_salt;
  }
  bool exec() const { return !exec_command.empty(); }
  /// Whether chunks pass through the salt sequencer (round-robin or automatic salting).
  bool sequenced_salting() const { return !salts.empty() || hot_keys_share.has_value(); }
  /// -o - without --exec: one stream, every event in global input order.
  bool ordered_stdout() const { return to_stdout && !exec(); }
};

/// The counters --hot-keys auto counts shares with: a count is at most 1/4097 of the events
/// (about 0.024 points of share) below the true one.
inline constexpr size_t kHotKeyCounters = 4096;
/// The smallest SHARE --hot-keys accepts: 0.01%, so that at most 10,000 keys are over it at once.
inline constexpr double kMinHotKeyShare = 0.0001;

/// At most this many keys are salted by --hot-keys, whose bytes add up to at most
/// kMaxHotKeyBytes: each is kept whole (its sub-keys are made of it), in memory and in each
/// checkpoint. A key found hot beyond either is not salted.
inline constexpr size_t kMaxHotKeyDecisions = 1024;
inline constexpr size_t kMaxHotKeyBytes = 4u << 20;

/// Under --commit sync, the outputs are made durable after at most this much input, whether a
/// checkpoint is due or not (see sync_ahead_due()): the disk writes (and flushes its cache) as
/// the run goes, not all at its end. It is also the default checkpoint interval
/// (--checkpoint-every auto), whose checkpoints sync anyway: 64 MiB, or 256 KiB a partition up
/// to 256 MiB. Each sync then finds every partition file grown by a piece the filesystem writes
/// back in one go; with 1,024 partitions, syncing every 64 MiB (64 KiB a file) cost about a
/// tenth more CPU, most of it in the kernel's writeback of many small pieces.
inline uint64_t sync_ahead_bytes(uint32_t partitions) {
  return std::clamp(uint64_t{partitions} << 18, uint64_t{64} << 20, uint64_t{256} << 20);
}

/// Under --checkpoint-every auto, a checkpoint due by size waits until this long after the last
/// one, or until the input goes quiet: a run that reads fast takes one every half second at
/// most, so that checkpoints cost it little however fast it reads (with 8 partitions, one every
/// 64 MiB made a split at 1.5 GB/s 7-11% slower), while one that reads slowly still takes one
/// every 64 MiB. Its checkpoints are its only syncs (see sync_ahead_due()).
inline constexpr double kAutoCheckpointSeconds = 0.5;

/// Whether a checkpoint is due after a chunk, with `bytes` of input read and `seconds` gone since
/// the last checkpoint (or the start); `quiet`: the chunk is the one a pipe gone quiet sends
/// (Chunk::flush_after), after which no chunk may come for long.
inline bool checkpoint_due(const RunConfig& config, uint64_t bytes, double seconds, bool quiet) {
  const bool by_size = config.checkpoint_every_bytes != 0 &&
                       bytes >= config.checkpoint_every_bytes &&
                       (quiet || seconds >= config.checkpoint_least_seconds);
  const bool by_time =
      config.checkpoint_every_seconds > 0 && seconds >= config.checkpoint_every_seconds;
  return by_size || by_time;
}

/// Whether --commit sync syncs the outputs ahead of the next checkpoint, `bytes` of input after
/// they were last synced (or asked to be): every sync_ahead_bytes() between checkpoints further
/// apart (a size or a time given, or none). Never under --checkpoint-every auto, whose
/// checkpoints come every sync_ahead_bytes() already, or every half second when the input comes
/// faster: a sync between two of those would be one more fsync of every output (with 1,024
/// partitions, 4% of a 1 GiB split's time).
inline bool sync_ahead_due(const RunConfig& config, uint64_t bytes) {
  return config.checkpoint_least_seconds == 0 && bytes >= sync_ahead_bytes(config.partitions);
}

/// The summary a run with -o DIR writes in DIR.
inline constexpr const char* kSummaryFileName = "keyshard-summary.json";
inline constexpr const char* kDeadLetterFileName = "dead-letter.ndjson";  // the default one
inline constexpr const char* kStateDirName = ".keyshard";  // checkpoint, lock
/// The files a run keeps in DIR/.keyshard: the checkpoint (written as a temporary file, then
/// renamed over it) and the run lock.
inline constexpr const char* kCheckpointFileName = "checkpoint.json";
inline constexpr const char* kLockFileName = "lock";

/// The longest file name keyshard makes, in bytes (NAME_MAX of Linux's file systems).
inline constexpr size_t kMaxFileNameBytes = 255;

/// The file name of partition `partition`, from the --name template (".zst" added when
/// compressing). A name longer than kMaxFileNameBytes, which no file may have, comes back cut
/// a little past that length (a template's width of a billion would take a gigabyte).
std::string partition_file_name(const RunConfig& config, uint32_t partition);
/// The file name of worker `worker`'s child output with --exec-per worker.
std::string worker_file_name(unsigned worker);

}  // namespace keyshard
