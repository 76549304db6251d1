#include "cli/split_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <thread>
#include <unordered_map>

#include "sinks/output_directory.h"
#include "util/files.h"

namespace keyshard {
namespace {

Status usage(std::string reason) { return Status::error(std::move(reason), {}, kExitUsage); }

Status parse_delimiter(std::string_view text, char& delimiter) {
  if (text == "\\t" || text == "tab") {
    delimiter = '\t';
  } else if (text == "space") {
    delimiter = ' ';
  } else if (text.size() == 1 && text[0] != '\n') {
    delimiter = text[0];
  } else {
    return usage("invalid --delimiter \"" + std::string(text) +
                 "\": give one character, or \\t, tab or space");
  }
  return {};
}

Status parse_keys(const SplitOptions& options, KeySpec& keys) {
  if (keys.format == InputFormat::kLine) {
    if (!options.keys.empty()) return usage("--format line uses the whole line as the key; drop -k");
    return {};
  }
  if (options.keys.empty()) {
    return usage(keys.format == InputFormat::kJson
                     ? "no key: name one with -k, e.g. -k user_id or -k /account/id"
                     : "no key: name a field number with -k, e.g. -k 3");
  }
  if (options.keys.size() > 64) return usage("at most 64 -k parts make one composite key");
  for (const std::string& spec : options.keys) {
    if (keys.format == InputFormat::kJson) {
      KeyPath path;
      if (Status status = parse_key_path(spec, path); !status) return status;
      keys.paths.push_back(std::move(path));
    } else {
      uint32_t field = 0;
      if (Status status = parse_field_number(spec, field); !status) return status;
      keys.fields.push_back(field);
    }
  }
  return {};
}

Status parse_name_template(const std::string& name, RunConfig& config) {
  auto invalid = [&](const std::string& why) {
    return usage("invalid --name \"" + name + "\": " + why);
  };
  std::string first, second;
  try {
    first = partition_file_name(config, 0);
    second = partition_file_name(config, 1);
  } catch (const fmt::format_error& error) {
    return invalid(std::string(error.what()) +
                   " (use {partition}, e.g. part-{partition:05}.ndjson)");
  }
  const auto too_long = [&](uint32_t partition) {
    return invalid(fmt::format("partition {}'s name would be longer than {} bytes, the most a "
                               "file name may have", partition, kMaxFileNameBytes));
  };
  if (first.size() > kMaxFileNameBytes) return too_long(0);  // (and cut, so perhaps alike)
  if (first == second) return invalid("it must contain {partition}");
  if (config.to_stdout) return {};
  // Every partition's name, as the files will be named (up to a million partitions: more cannot
  // be open at once anyway).
  std::unordered_map<std::string, uint32_t> seen;
  const uint32_t named = std::min<uint32_t>(config.partitions, 1u << 20);
  for (uint32_t p = 0; p < named; ++p) {
    std::string file = partition_file_name(config, p);
    if (file.find('/') != std::string::npos) return invalid("it names a file, without '/'");
    if (file.size() > kMaxFileNameBytes) return too_long(p);
    if (file.find('\0') != std::string::npos) {
      return invalid(fmt::format("partition {}'s name would hold a NUL byte", p));
    }
    if (file == "." || file == ".." || file == kStateDirName || file == kSummaryFileName ||
        file == kDeadLetterFileName) {
      return invalid(fmt::format("partition {} would be named \"{}\", a name keyshard keeps "
                                 "for itself", p, file));
    }
    const auto [at, fresh] = seen.emplace(std::move(file), p);
    if (!fresh) {
      return invalid(fmt::format("partitions {} and {} would both be named \"{}\"", at->second,
                                 p, at->first));
    }
  }
  return {};
}

Status parse_compress(const std::string& text, RunConfig& config) {
  if (text.empty() || text == "none") return {};
  if (text == "zstd") {
    config.zstd_level = 3;
    return {};
  }
  int level = 0;
  if (text.starts_with("zstd:")) {
    const std::string_view digits = std::string_view(text).substr(5);
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), level);
    if (error == std::errc() && end == digits.data() + digits.size() && level >= 1 &&
        level <= ZSTD_maxCLevel()) {
      config.zstd_level = level;
      return {};
    }
  }
  return usage(fmt::format("invalid --compress \"{}\": use zstd, zstd:LEVEL (LEVEL 1..{}) or none",
                           text, ZSTD_maxCLevel()));
}

Status parse_annotate(const std::string& text, RunConfig& config) {
  if (text.empty()) return {};
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string field = text.substr(start, comma - start);
    if (field == "partition") {
      config.annotate_partition = true;
    } else if (field == "offset") {
      config.annotate_offset = true;
    } else if (field == "key") {
      config.annotate_key = true;
    } else if (field == "salt") {
      config.annotate_salt = true;
    } else {
      return usage("invalid --annotate field \"" + field +
                   "\": use partition, offset, key, salt, or several joined by commas");
    }
    start = comma + 1;
  }
  if (config.keys.format != InputFormat::kJson) {
    return usage("--annotate adds JSON fields, so it needs --format json");
  }
  return {};
}

Status parse_salts(const SplitOptions& options, RunConfig& config) {
  for (const std::string& text : options.salts) {
    const size_t colon = text.rfind(':');
    uint32_t sub_keys = 0;
    if (colon != std::string::npos) {  // KEY may be empty: the empty key can be hot too
      const char* first = text.data() + colon + 1;
      const char* last = text.data() + text.size();
      const auto [end, error] = std::from_chars(first, last, sub_keys);
      if (error == std::errc() && end == last && sub_keys >= 2 && sub_keys <= 4096) {
        const std::string key = text.substr(0, colon);
        for (const auto& [earlier, count] : config.salts) {
          if (earlier == key) {
            return usage("--salt is given twice for the key \"" + key +
                         "\": give each key once");
          }
        }
        config.salts.emplace_back(key, sub_keys);
        continue;
      }
    }
    return usage("invalid --salt \"" + text + "\": give KEY:K with K from 2 to 4096, e.g. " +
                 "--salt user_celebrity:8");
  }
  if (!options.hot_keys.empty()) {
    double share = 0.02;
    bool good = options.hot_keys == "auto";
    if (!good && options.hot_keys.starts_with("auto:")) {
      std::string number = options.hot_keys.substr(5);
      const bool percent = !number.empty() && number.back() == '%';
      if (percent) number.pop_back();
      const auto [end, error] =
          std::from_chars(number.data(), number.data() + number.size(), share);
      if (percent) share /= 100;
      // (SHARE's floor, kMinHotKeyShare, is checked where a new run starts, so that a run
      // recorded with a smaller SHARE before there was a floor can go on)
      good = error == std::errc() && end == number.data() + number.size() && share > 0 &&
             share < 1;
    }
    if (!good) return invalid_hot_keys(options.hot_keys);
    if (config.partitions < 2) {
      return usage("--hot-keys spreads a hot key over the partitions; with -n 1 there is "
                   "nothing to spread it over");
    }
    config.hot_keys_share = share;
  }
  if (!options.salt_by.empty()) {
    if (config.keys.format != InputFormat::kJson) return usage("--salt-by needs --format json");
    KeyPath path;
    if (Status status = parse_key_path(options.salt_by, path); !status) return status;
    config.salt_by = std::move(path);
  }
  return {};
}

Status parse_missing_key(const std::string& text, RunConfig& config) {
  if (text == "bad") return {};
  uint32_t partition = 0;
  if (text.starts_with("partition:")) {
    const std::string_view digits = std::string_view(text).substr(10);
    const auto [end, error] =
        std::from_chars(digits.data(), digits.data() + digits.size(), partition);
    if (error == std::errc() && end == digits.data() + digits.size()) {
      if (partition >= config.partitions) {
        return usage(fmt::format("--missing-key partition:{} is out of range: partitions are "
                                 "0..{}",
                                 partition, config.partitions - 1));
      }
      config.missing_key_partition = partition;
      return {};
    }
  }
  return usage("invalid --missing-key \"" + text + "\": use bad or partition:P");
}

// 64MiB, or a duration: 30s, 5m, 1h; off: only at the start and the end of the run.
Status parse_checkpoint_every(const std::string& text, RunConfig& config) {
  config.checkpoint_every_bytes = 0;
  config.checkpoint_every_seconds = 0;
  if (text == "off") return {};
  if (parse_size(text, config.checkpoint_every_bytes) && config.checkpoint_every_bytes > 0) {
    return {};
  }
  double number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  const std::string_view unit(end, static_cast<size_t>(text.data() + text.size() - end));
  const double scale = unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : 0;
  if (error == std::errc() && number > 0 && scale > 0) {
    config.checkpoint_every_seconds = number * scale;
    return {};
  }
  return usage("invalid --checkpoint-every \"" + text +
               "\": give a size of input (64MiB), a time (30s, 5m, 1h) or off");
}

Status parse_guardrails(const SplitOptions& options, RunConfig& config) {
  if (!options.max_bad.empty()) {
    std::string text = options.max_bad;
    const bool percent = text.back() == '%';
    if (percent) text.pop_back();
    bool good = false;
    if (percent) {
      double share = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), share);
      good = error == std::errc() && end == text.data() + text.size() && share >= 0 &&
             share <= 100;
      config.max_bad_share = share / 100;
    } else {
      uint64_t count = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
      good = error == std::errc() && end == text.data() + text.size();
      config.max_bad_lines = count;
    }
    if (!good) {
      return usage("invalid --max-bad \"" + options.max_bad +
                   "\": give a number of lines (100) or a share of the lines read (0.5%)");
    }
  }
  if (!options.max_skew.empty()) {
    double skew = 0;
    const std::string& text = options.max_skew;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), skew);
    // (`!(skew >= 1)`: NaN, which compares false with anything, is refused too)
    if (error != std::errc() || end != text.data() + text.size() || !(skew >= 1)) {
      return usage("invalid --max-skew \"" + text +
                   "\": give the largest max/mean events per partition allowed, at least 1 "
                   "(e.g. 2.5)");
    }
    config.max_skew = skew;
  }
  return {};
}

}  // namespace

bool parse_size(std::string_view text, uint64_t& bytes) {
  uint64_t number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc() || end == text.data()) return false;
  const std::string_view suffix(end, static_cast<size_t>(text.data() + text.size() - end));
  uint64_t unit = 0;
  if (suffix.empty() || suffix == "B") unit = 1;
  else if (suffix == "K" || suffix == "KiB") unit = 1ull << 10;
  else if (suffix == "M" || suffix == "MiB") unit = 1ull << 20;
  else if (suffix == "G" || suffix == "GiB") unit = 1ull << 30;
  else if (suffix == "KB") unit = 1000;
  else if (suffix == "MB") unit = 1000 * 1000;
  else if (suffix == "GB") unit = 1000 * 1000 * 1000;
  else return false;
  if (number > UINT64_MAX / unit) return false;
  bytes = number * unit;
  return true;
}

Status check_standard_input(const RunConfig& config) {
  const auto named = std::count(config.inputs.begin(), config.inputs.end(), "-");
  if (named > 1) return usage("- (standard input) is named more than once; it can be read once");
  if (named == 1 && standard_stream_was_closed(STDIN_FILENO)) {
    return usage("standard input is closed; name the input files, or open it");
  }
  return {};
}

Status make_input_config(const SplitOptions& options, RunConfig& config) {
  config = RunConfig{};
  config.inputs = options.inputs.empty() ? std::vector<std::string>{"-"} : options.inputs;
  for (const std::string& path : config.inputs) {
    config.input_names.push_back(path == "-" ? "<stdin>" : path);
  }

  if (options.format == "json") config.keys.format = InputFormat::kJson;
  else if (options.format == "delimited") config.keys.format = InputFormat::kDelimited;
  else if (options.format == "line") config.keys.format = InputFormat::kLine;
  else return usage("invalid --format \"" + options.format + "\": use json, delimited or line");
  if (Status status = parse_delimiter(options.delimiter, config.keys.delimiter); !status) {
    return status;
  }
  config.keys.validate = !options.no_validate;
  if (Status status = parse_keys(options, config.keys); !status) return status;

  uint64_t max_line = 0;
  if (!parse_size(options.max_line_size, max_line) || max_line < 4096 || max_line > (1ull << 30)) {
    return usage("invalid --max-line-size \"" + options.max_line_size +
                 "\": give a size from 4KiB to 1GiB, e.g. 64MiB");
  }
  config.max_line_size = max_line;
  uint64_t chunk_size = 0;
  if (!parse_size(options.chunk_size, chunk_size) || chunk_size == 0) {
    return usage("invalid --chunk-size \"" + options.chunk_size + "\"");
  }
  config.chunk_size = std::min(chunk_size, max_line);  // a chunk may grow to one whole line

  const auto hash = parse_hash_name(options.hash);
  if (!hash) return usage("invalid --hash \"" + options.hash + "\"");
  config.hash = *hash;
  // (Checked here too for the options a checkpoint records.)
  if (options.threads > kMaxThreads) {
    return usage(fmt::format("-j {} is out of range: 1 to {}", options.threads, kMaxThreads));
  }
  config.partitions = options.partitions;
  config.threads = options.threads != 0 ? options.threads
                                        : std::max(1u, std::thread::hardware_concurrency());
  if (Status status = parse_salts(options, config); !status) return status;
  config.progress =
      options.progress || (!options.no_progress && !options.quiet && isatty(STDERR_FILENO) == 1);
  return parse_missing_key(options.missing_key, config);
}

Status invalid_hot_keys(const std::string& text) {
  static_assert(kMinHotKeyShare == 0.0001, "the message gives SHARE's floor");
  return usage("invalid --hot-keys \"" + text + "\": use auto, or auto:SHARE with SHARE from "
               "0.01% to below 100%, such as auto:5% or auto:0.05");
}

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

}  // namespace

SplitOptions acting_options(const SplitOptions& options, const std::string& dir) {
  SplitOptions acting = options;
  SplitOptions probe = options;  // (recorded options name no inputs; only their settings count)
  if (probe.inputs.empty()) probe.inputs.push_back("input");
  RunConfig config;
  if (Status status = make_run_config(probe, config); !status) return acting;
  acting.hash = hash_name(config.hash);
  acting.compress = config.zstd_level ? fmt::format("zstd:{}", *config.zstd_level) : "none";
  acting.hot_keys = config.hot_keys_share ? fmt::format("auto:{}", *config.hot_keys_share) : "";
  acting.max_line_size = std::to_string(config.max_line_size);
  acting.name = with_named_argument(options.name);
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

Status make_run_config(const SplitOptions& options, RunConfig& config) {
  // (Checked here too for the options a checkpoint records; plan takes larger counts.)
  if (options.partitions == 0 || options.partitions > kMaxPartitions) {
    return usage(fmt::format("-n {} is out of range: 1 to {}", options.partitions,
                             kMaxPartitions));
  }
  if (Status status = make_input_config(options, config); !status) return status;
  if (options.output.empty()) return usage("no output: give -o DIR, or -o - for stdout");
  config.to_stdout = options.output == "-";
  if (config.to_stdout && standard_stream_was_closed(STDOUT_FILENO)) {
    return usage("-o -: standard output is closed; give -o DIR, or open it");
  }
  config.output_dir = config.to_stdout ? std::string() : without_trailing_slashes(options.output);
  config.force = options.force;
  if (Status status = parse_compress(options.compress, config); !status) return status;
  config.name_template = options.name;
  if (Status status = parse_name_template(options.name, config); !status) return status;
  if (Status status = parse_annotate(options.annotate, config); !status) return status;

  if (options.on_bad == "dead-letter") config.on_bad = BadLinePolicy::kDeadLetter;
  else if (options.on_bad == "skip") config.on_bad = BadLinePolicy::kSkip;
  else if (options.on_bad == "fail") config.on_bad = BadLinePolicy::kFail;
  else return usage("invalid --on-bad \"" + options.on_bad + "\": use dead-letter, skip or fail");
  if (options.dead_letter == "-") {
    return usage("--dead-letter takes a file path (without it, -o - sends dead letters to "
                 "stderr)");
  }
  if (!options.dead_letter.empty()) {
    config.dead_letter_path = options.dead_letter;
  } else if (!config.to_stdout) {
    config.dead_letter_path = config.output_dir + "/" + kDeadLetterFileName;
  }
  // With -o DIR the dead-letter file is one of the run's outputs: synced, its size checkpointed
  // and cut back to it on resume. A device or pipe can be none of that.
  if (struct stat info {}; !config.to_stdout && config.on_bad == BadLinePolicy::kDeadLetter &&
                           !options.dead_letter.empty() &&
                           ::stat(options.dead_letter.c_str(), &info) == 0 &&
                           !S_ISREG(info.st_mode)) {
    return usage("--dead-letter \"" + options.dead_letter + "\" is " +
                 (S_ISDIR(info.st_mode) ? "a directory" : "not a regular file") +
                 "; with -o DIR it is kept like the outputs (synced, and cut back on resume), so "
                 "name a regular file (to drop bad lines: --on-bad skip)");
  }
  config.quiet = options.quiet;
  config.verbose = options.verbose;

  config.exec_command = options.exec;
  if (options.exec_per != "partition" && options.exec_per != "worker") {
    return usage("invalid --exec-per \"" + options.exec_per + "\": use partition or worker");
  }
  config.exec_per_worker = options.exec_per == "worker";
  config.allow_early_exit = options.allow_early_exit;
  if (!config.exec() && (config.exec_per_worker || config.allow_early_exit)) {
    return usage("--exec-per and --allow-early-exit go with --exec CMD");
  }
  if (config.exec() && config.to_stdout && config.zstd_level) {
    return usage("--compress with --exec compresses the children's output files in DIR; with "
                 "-o - their lines go to standard output as they are (pipe it through zstd)");
  }

  config.checkpoints = !config.to_stdout;
  if (Status status = parse_checkpoint_every(options.checkpoint_every, config); !status) {
    return status;
  }
  if (options.commit != "sync" && options.commit != "async") {
    return usage("invalid --commit \"" + options.commit + "\": use sync or async");
  }
  config.commit_sync = options.commit == "sync";
  config.incremental = options.incremental;
  if (config.incremental) {
    if (config.to_stdout) {
      return usage("--incremental keeps its state in the output directory: give -o DIR");
    }
    for (const std::string& path : config.inputs) {
      if (path == "-") {
        return usage("--incremental continues files from where the last run stopped; it "
                     "cannot read stdin (name the files)");
      }
      // A pipe or device has no offset to continue from: the next run would wait on it.
      struct stat info {};
      if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode)) {
        return usage("--incremental continues files from where the last run stopped; \"" +
                     path + "\" is " + (S_ISFIFO(info.st_mode) ? "a FIFO" : "not a regular file") +
                     ", which has no place to continue from (read it without --incremental)");
      }
    }
  }
  return parse_guardrails(options, config);
}

}  // namespace keyshard
