// Validation: the options of `split` → an immutable RunConfig, every default resolved and every
// conflict refused with a message that says what to type instead. Each option's own text is
// parsed in option_values.cc.
#include "cli/split_config.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <thread>
#include <unordered_map>

#include "cli/option_values.h"
#include "sinks/output_directory.h"
#include "util/files.h"

namespace keyshard {
namespace {

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
  // A part named twice (however spelt: a.b and /a/b are one path) makes a key of its value
  // twice over, joined by 0x1F: most likely a mistake, so a warning says so; not a refusal, as
  // a run (and its checkpoint) may have partitioned by that key.
  auto twice = [](const std::string& first, const std::string& again) {
    print_warning((first == again ? "-k names \"" + first + "\" twice"
                                  : "-k names one path twice, as \"" + first + "\" and \"" +
                                        again + "\"") +
                  ": the key is its value twice over, joined by the byte 0x1F");
  };
  for (const std::string& spec : options.keys) {
    if (keys.format == InputFormat::kJson) {
      KeyPath path;
      if (Status status = parse_key_path(spec, path); !status) return status;
      // (Once a path: named a third time, it was warned of already.)
      const KeyPath* first = nullptr;
      size_t times = 0;
      for (const KeyPath& earlier : keys.paths) {
        if (json_pointer_of(earlier) != json_pointer_of(path)) continue;
        if (times++ == 0) first = &earlier;
      }
      if (times == 1) twice(first->spelling, path.spelling);
      keys.paths.push_back(std::move(path));
    } else {
      uint32_t field = 0;
      if (Status status = parse_field_number(spec, field); !status) return status;
      if (std::count(keys.fields.begin(), keys.fields.end(), field) == 1) twice(spec, spec);
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

}  // namespace

Status check_inputs(const RunConfig& config) {
  const auto named = std::count(config.inputs.begin(), config.inputs.end(), "-");
  if (named > 1) return usage("- (standard input) is named more than once; it can be read once");
  if (named == 1 && standard_stream_was_closed(STDIN_FILENO)) {
    return usage("standard input is closed; name the input files, or open it");
  }
  if (named == 1 && ::isatty(STDIN_FILENO) == 1) {
    // (No input file named, most often: the run would seem to hang.)
    print_warning("reading events from the terminal: type them and end with ^D, or name the "
                  "input files");
  }
  if (config.incremental) return {};
  // The same file under two names (a.ndjson and ./a.ndjson, a link; standard input redirected
  // from it), or one twice: read each time, as cat would, but most likely a mistake. (Said once
  // a file.)
  std::map<FileIdentity, std::pair<size_t, bool>> files;  // -> first index, warned
  const auto name_of = [&config](size_t i) {
    return config.inputs[i] == "-" ? std::string("- (standard input)") : config.inputs[i];
  };
  for (size_t i = 0; i < config.inputs.size(); ++i) {
    const std::optional<FileIdentity> identity = config.inputs[i] == "-"
                                                       ? stream_file(STDIN_FILENO)
                                                       : identity_of(config.inputs[i]);
    if (!identity) continue;  // (one that cannot be reached: opening it says why)
    const auto [at, fresh] = files.try_emplace(*identity, i, false);
    if (fresh || at->second.second) continue;
    at->second.second = true;
    const std::string first = name_of(at->second.first);
    print_warning(fmt::format("{}: named twice{}; it is read each time, so its events count twice "
                              "over", name_of(i),
                              first == name_of(i) ? "" : " (also as " + first + ")"));
  }
  return {};
}

Status make_input_config(const SplitOptions& options, RunConfig& config) {
  config = RunConfig{};
  config.inputs = options.inputs.empty() ? std::vector<std::string>{"-"} : options.inputs;
  for (const std::string& path : config.inputs) {
    // (An unset shell variable, most often: "$LOG".)
    if (path.empty()) return usage("an input is named by an empty word (''): name a file, or -");
    config.input_names.push_back(path == "-" ? "<stdin>" : path);
  }

  if (options.format == "json") config.keys.format = InputFormat::kJson;
  else if (options.format == "delimited") config.keys.format = InputFormat::kDelimited;
  else if (options.format == "line") config.keys.format = InputFormat::kLine;
  else return usage("invalid --format \"" + options.format + "\": use json, delimited or line");
  if (Status status = parse_delimiter(options.delimiter, config.keys.delimiter); !status) {
    return status;
  }
  if (options.delimiter_given && config.keys.format != InputFormat::kDelimited) {
    // (Most likely --format delimited was forgotten, and the whole line or a JSON field is
    // taken instead. A warning, not a refusal: it changes nothing, as it did before.)
    print_warning("--delimiter changes nothing with --format " + options.format +
                  ": it splits the fields of --format delimited, which is to be given too");
  }
  if (options.no_validate && config.keys.format != InputFormat::kJson) {
    print_warning("--no-validate changes nothing with --format " + options.format +
                  ": only --format json checks each line");
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
  if (options.progress && options.no_progress) return usage(kProgressConflict);
  config.progress =
      options.progress || (!options.no_progress && !options.quiet && isatty(STDERR_FILENO) == 1);
  return parse_missing_key(options.missing_key, config);
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
  // (DIR itself, before it exists, would fail only once the run tried to create the file.)
  const auto normal = [](const std::string& path) {
    return std::filesystem::absolute(path).lexically_normal().string();
  };
  if (!config.to_stdout && config.on_bad == BadLinePolicy::kDeadLetter &&
      !options.dead_letter.empty() &&
      without_trailing_slashes(normal(options.dead_letter)) ==
          without_trailing_slashes(normal(config.output_dir))) {
    return usage("--dead-letter \"" + options.dead_letter + "\" is the output directory; name a "
                 "regular file (to drop bad lines: --on-bad skip)");
  }
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
  if (config.exec() && config.zstd_level) {
    // Compressed by keyshard, the children's output would pass through it, and a crash of
    // keyshard would lose what it held, which resume does not send again.
    return usage("--compress does not go with --exec: compress in the command instead, e.g. "
                 "--exec 'CMD | zstd -q' --name 'part-{partition:05}.ndjson.zst' (its output "
                 "goes to the file as it is, and survives a crash of keyshard)");
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
