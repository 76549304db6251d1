// One option's text → its setting in a RunConfig, or a refusal (status 2, kExitUsage) that says
// what to type instead. make_run_config (split_config.h) applies them and checks combinations.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cli/options.h"
#include "pipeline/run_config.h"
#include "util/status.h"

namespace keyshard {

/// A refusal of the command line (status 2) for `reason`.
Status usage(std::string reason);
/// DIR given as an empty word (an unset shell variable, most often).
inline constexpr const char* kEmptyDir =
    "DIR is an empty word (''): give the output directory of a split, e.g. out/";

/// Parses "4096", "64KiB", "64K", "1MB", "2GiB" (K/M/G and KiB/MiB/GiB are powers of 1024;
/// KB/MB/GB are powers of 1000).
bool parse_size(std::string_view text, uint64_t& bytes);

/// --delimiter: one character, or \t, tab or space.
Status parse_delimiter(std::string_view text, char& delimiter);
/// --compress: zstd, zstd:LEVEL or none.
Status parse_compress(const std::string& text, RunConfig& config);
/// --annotate: fields joined by commas (needs config.keys.format set).
Status parse_annotate(const std::string& text, RunConfig& config);
/// --salt, --hot-keys and --salt-by (need config.partitions and config.keys.format set).
Status parse_salts(const SplitOptions& options, RunConfig& config);
/// The refusal of `--hot-keys TEXT` with a form or SHARE it does not take.
Status invalid_hot_keys(const std::string& text);
/// --missing-key: bad or partition:P (needs config.partitions set).
Status parse_missing_key(const std::string& text, RunConfig& config);
/// --checkpoint-every: a size of input, a duration (30s, 5m, 1h), auto or off (auto needs
/// config.partitions set).
Status parse_checkpoint_every(const std::string& text, RunConfig& config);
/// --max-bad and --max-skew.
Status parse_guardrails(const SplitOptions& options, RunConfig& config);

}  // namespace keyshard
