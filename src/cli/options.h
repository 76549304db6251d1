// What the user typed, as plain values: CLI11 fills these structs and nothing else. Turning
// them into a checked RunConfig is split_config's job (parse first, validate second).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace keyshard {

inline constexpr uint32_t kMaxPartitions = 1u << 20;  // -n
inline constexpr unsigned kMaxThreads = 256;          // -j

struct SplitOptions {
  // Input
  std::vector<std::string> inputs;
  std::string format = "json";
  std::string delimiter = "\\t";
  bool delimiter_given = false;  // on this command line (not recorded: a run's own choice)
  bool no_validate = false;
  std::string max_line_size = "64MiB";
  std::string chunk_size = "1MiB";  // hidden: tests use tiny chunks to stress line boundaries
  // Keys
  std::vector<std::string> keys;
  std::string missing_key = "bad";
  std::vector<std::string> salts;  // KEY:K
  std::string salt_by;
  std::string hot_keys;  // auto[:SHARE]
  // Partitioning
  uint32_t partitions = 0;
  std::string hash = "murmur2";
  unsigned threads = 0;  // 0: all cores
  // Output
  std::string output;
  std::string name = "part-{partition:05}.ndjson";
  std::string compress;
  std::string annotate;
  bool force = false;
  // Processing
  std::string exec;
  std::string exec_per = "partition";
  bool allow_early_exit = false;
  // Bad lines
  std::string on_bad = "dead-letter";
  std::string dead_letter;
  // Checkpoints
  std::string checkpoint_every = "auto";
  std::string commit = "sync";
  bool incremental = false;
  std::string max_bad;   // N or P%
  std::string max_skew;  // R
  // Reporting
  bool quiet = false;
  bool progress = false;
  bool no_progress = false;
  bool verbose = false;
};

struct ResumeOptions {
  std::string dir;
  unsigned threads = 0;  // 0: as recorded
  bool quiet = false;
  bool progress = false;
  bool no_progress = false;
  bool verbose = false;
};

struct VerifyOptions {
  std::string dir;
  bool quiet = false;
};

struct StatsOptions {
  SplitOptions split;  // the input, key and partitioning options
  size_t top = 10;
  uint32_t sub_keys = 8;
  bool json = false;
};

struct PlanOptions {
  SplitOptions split;  // the input and key options
  uint32_t from = 0;
  uint32_t to = 0;
  bool json = false;
};

struct WhichOptions {
  uint32_t partitions = 0;
  std::string hash = "murmur2";
  std::vector<std::string> keys;
};

}  // namespace keyshard
