// The options of `split` written one way, so that two runs that act alike compare equal (what
// --incremental checks against the options its checkpoint recorded).
#include "cli/acting_options.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <optional>
#include <vector>

#include "cli/split_config.h"
#include "sinks/output_directory.h"

namespace keyshard {
namespace {

// --name with each replacement field's argument spelt {partition}: "{}", "{0}" and "{partition}"
// are the same argument ("p{0:05}" is "p{partition:05}"). Specs are kept as they are.
std::string with_named_argument(const std::string& name) {
  std::string result;
  for (size_t i = 0; i < name.size(); ++i) {
    result += name[i];
    if (name[i] != '{') continue;
    if (i + 1 < name.size() && name[i + 1] == '{') {  // "{{": a brace
      result += name[++i];
      continue;
    }
    const size_t end = name.find_first_of(":}", i + 1);
    if (end == std::string::npos) continue;  // (not a template parse_name_template accepts)
    const std::string_view argument = std::string_view(name).substr(i + 1, end - i - 1);
    if (argument.empty() || argument == "0" || argument == "partition") {
      result += "partition";
      i = end - 1;
    }
  }
  return result;
}

// The name of each partition's file under `config`.
std::vector<std::string> file_names(const RunConfig& config) {
  std::vector<std::string> names;
  for (uint32_t partition = 0; partition < config.partitions; ++partition) {
    names.push_back(partition_file_name(config, partition));
  }
  return names;
}

// The run configuration of `options` (recorded options name no inputs; only their settings
// count), or nothing when they are refused.
std::optional<RunConfig> config_of(const SplitOptions& options) {
  SplitOptions probe = options;
  if (probe.inputs.empty()) probe.inputs.push_back("input");
  probe.delimiter_given = false;  // (the run's own config has said what there is to say)
  RunConfig config;
  if (!make_run_config(probe, config)) return std::nullopt;
  return config;
}

}  // namespace

SplitOptions acting_options(const SplitOptions& options, const std::string& dir,
                            const SplitOptions* other) {
  SplitOptions acting = options;
  const std::optional<RunConfig> given = config_of(options);
  if (!given) return acting;
  const RunConfig& config = *given;
  acting.hash = hash_name(config.hash);
  acting.compress = config.zstd_level ? fmt::format("zstd:{}", *config.zstd_level) : "none";
  acting.hot_keys = config.hot_keys_share ? fmt::format("auto:{}", *config.hot_keys_share) : "";
  acting.max_line_size = std::to_string(config.max_line_size);
  acting.name = with_named_argument(options.name);
  if (other != nullptr && other->name != options.name) {
    // Templates spelt otherwise that name every file alike ("p{partition:03}" and
    // "p{partition:03d}") are the same --name.
    const std::optional<RunConfig> others = config_of(*other);
    if (others && file_names(config) == file_names(*others)) {
      acting.name = with_named_argument(other->name);
    }
  }
  acting.missing_key = config.missing_key_partition
                           ? fmt::format("partition:{}", *config.missing_key_partition)
                           : "bad";
  // KEY:K with K as a number ("a:03" is "a:3"), in the order given.
  acting.salts.clear();
  for (const auto& [key, sub_keys] : config.salts) {
    acting.salts.push_back(fmt::format("{}:{}", key, sub_keys));
  }
  // (A tab is --delimiter's default, "\t", however it was typed: a tab, "\t" or "tab". It
  // changes nothing but with --format delimited.)
  acting.delimiter = config.keys.format != InputFormat::kDelimited || config.keys.delimiter == '\t'
                         ? SplitOptions().delimiter
                         : std::string(1, config.keys.delimiter);
  std::vector<std::string_view> fields;  // in the order they are added to an event
  if (config.annotate_partition) fields.push_back("partition");
  if (config.annotate_offset) fields.push_back("offset");
  if (config.annotate_salt) fields.push_back("salt");
  if (config.annotate_key) fields.push_back("key");
  acting.annotate = fmt::format("{}", fmt::join(fields, ","));
  // Keys as JSON Pointers ("user_id" is "/user_id"), field numbers as numbers ("03" is "3").
  acting.keys.clear();
  for (const KeyPath& path : config.keys.paths) acting.keys.push_back(json_pointer_of(path));
  for (uint32_t field : config.keys.fields) acting.keys.push_back(std::to_string(field));
  if (config.salt_by) acting.salt_by = json_pointer_of(*config.salt_by);
  // The default dead-letter file, spelt out, is the default: DIR's dead-letter.ndjson, DIR
  // being the directory both runs write (the earlier one may have named it from elsewhere).
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path dead = options.dead_letter;
  if (!dead.empty() && dead.filename() == kDeadLetterFileName &&
      fs::equivalent(dead.parent_path(), dir, error)) {
    acting.dead_letter.clear();
  }
  return acting;
}

}  // namespace keyshard
