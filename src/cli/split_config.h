// Validation: turns the options of `split` into a RunConfig with every default resolved and
// every conflict refused with a message that says what to type instead.
#pragma once

#include <cstdint>
#include <string_view>

#include "cli/options.h"
#include "pipeline/run_config.h"
#include "util/status.h"

namespace keyshard {

Status make_run_config(const SplitOptions& options, RunConfig& config);

/// The refusal (status 2) of `--hot-keys TEXT` with a form or SHARE it does not take.
Status invalid_hot_keys(const std::string& text);

/// `options` with the settings that have several spellings written one way: a --hash alias,
/// --compress and --hot-keys with their defaults spelt out, --max-line-size in bytes, the
/// --annotate fields in the order they are written, -k paths as JSON Pointers, --delimiter as
/// the byte it is (and as the default unless --format delimited), and DIR's own
/// dead-letter file (DIR is the output directory of the run) as the default. Two runs whose
/// options are equal so act alike (what --incremental requires). Options that are refused come
/// back as given.
SplitOptions acting_options(const SplitOptions& options, const std::string& dir);

/// For a run that starts reading its inputs (not a resumed one, which may have read standard
/// input already): refuses (status 2) standard input named twice, or named and closed.
Status check_standard_input(const RunConfig& config);

/// The input, key and partitioning part of make_run_config, for the commands that read inputs
/// and write no partitions (stats, plan).
Status make_input_config(const SplitOptions& options, RunConfig& config);

/// Parses "4096", "64KiB", "64K", "1MB", "2GiB" (K/M/G and KiB/MiB/GiB are powers of 1024;
/// KB/MB/GB are powers of 1000).
bool parse_size(std::string_view text, uint64_t& bytes);

}  // namespace keyshard
