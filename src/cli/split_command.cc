// `keyshard split`: its options, grouped as in the man page, and the run: validate, prepare the
// outputs, run the pipeline, report.
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/checkpoint_store.h"
#include "checkpoint/incremental_plan.h"
#include "checkpoint/rotated_files.h"
#include "cli/acting_options.h"
#include "cli/app.h"
#include "cli/option_values.h"
#include "cli/recorded_options.h"
#include "cli/run_report.h"
#include "cli/split_config.h"
#include "sinks/output_directory.h"
#include "sinks/overlap_checks.h"
#include "util/durable_files.h"
#include "util/files.h"
#include "util/interrupt.h"

namespace keyshard {

CLI::App* add_split_command(CLI::App& app, SplitOptions& o) {
  CLI::App* split = app.add_subcommand("split", "Partition events by key into N ordered streams");
  split->footer(
      "Examples:\n"
      "  keyshard split -k user_id -n 8 -o out/ events.ndjson logs/*.ndjson.zst\n"
      "  keyshard split -k account.id -k currency -n 16 --hash crc32 -o out/ tx.ndjson\n"
      "  keyshard split -k account -n 16 --exec 'python3 settle.py' -o out/ tx.ndjson\n"
      "  keyshard split --format delimited --delimiter , -k 3 -n 4 -o - < x.csv\n"
      "  keyshard split --incremental -k user_id -n 8 -o out/ /var/log/app.ndjson");

  add_input_options(*split, o);
  add_key_options(*split, o);
  add_salt_options(*split, o);
  add_partitioning_options(*split, o);
  auto choice = [](std::vector<std::string> names) {
    return CLI::IsMember(std::move(names)).description("");  // the choices are in the text
  };

  split->add_option("-o,--output", o.output, "Output directory, or - for stdout\n(required)")
      ->group("Output")
      ->type_name("DIR");
  split->add_option("--name", o.name, "Partition file name template")
      ->group("Output")
      ->type_name("TEMPLATE")
      ->capture_default_str();
  split->add_option("--compress", o.compress,
                    "Compress outputs: zstd, zstd:LEVEL, or none\n(the default)")
      ->group("Output")
      ->type_name("zstd[:LEVEL]")
      ->check(not_empty("is empty: give zstd, zstd:LEVEL or none"));
  split->add_option("--annotate", o.annotate, "Add fields: partition, offset, key, salt\n"
                                              "(e.g. partition,offset)")
      ->group("Output")
      ->type_name("FIELDS")
      ->check(not_empty("names no field: give partition, offset, key or salt, or several "
                        "joined by commas"));
  split->add_flag("--force", o.force,
                  "Write into a non-empty output directory,\nand over a --dead-letter file")
      ->group("Output");

  split->add_option("--exec", o.exec,
                    "Feed each partition to its own /bin/sh -c\nCMD; its stdout is the output. "
                    "After a\ncrash, resume feeds the events after the\nlast checkpoint "
                    "again (at-least-once)")
      ->group("Processing")
      ->type_name("CMD")
      ->check(not_blank("names no command: give a shell command, e.g. --exec 'sort -k2'"));
  split->add_option("--exec-per", o.exec_per, "With --exec: one child per partition or\nper worker")
      ->group("Processing")
      ->type_name("UNIT")
      ->check(choice({"partition", "worker"}))
      ->capture_default_str();
  split->add_flag("--allow-early-exit", o.allow_early_exit,
                  "With --exec: a child may exit (status 0)\nbefore its input ends")
      ->group("Processing");

  split->add_option("--on-bad", o.on_bad, "Bad lines: dead-letter, skip or fail\n(exit 65)")
      ->group("Bad lines")
      ->type_name("POLICY")
      ->check(choice({"dead-letter", "skip", "fail"}))
      ->capture_default_str();
  split->add_option("--dead-letter", o.dead_letter,
                    "Dead-letter file (default: in DIR;\nstderr with -o -)")
      ->group("Bad lines")
      ->type_name("FILE")
      ->check(not_empty("names no file: give a path (without it, the default)"));

  split->add_option("--checkpoint-every", o.checkpoint_every,
                    "Checkpoint after this much input (SIZE),\nor this often (30s, 5m); off;\n"
                    "auto: 64MiB, or 256KiB a partition\nup to 256MiB; 0.5s apart at least")
      ->group("Checkpoints")
      ->type_name("WHEN")
      ->capture_default_str();
  split->add_option("--commit", o.commit,
                    "sync: fsync outputs before each checkpoint;\nasync: survive a crash, not "
                    "a power cut")
      ->group("Checkpoints")
      ->type_name("MODE")
      ->check(choice({"sync", "async"}))
      ->capture_default_str();
  split->add_flag("--incremental", o.incremental,
                  "Continue each file where the last run\nstopped and append (for cron)")
      ->group("Checkpoints");
  split->add_option("--max-bad", o.max_bad, "Exit 3 if bad lines exceed N or P% of lines")
      ->group("Checkpoints")
      ->type_name("N|P%")
      ->check(not_empty("is empty: give a count, such as 100, or a share, such as 0.5%"));
  split->add_option("--max-skew", o.max_skew, "Exit 4 if max/mean events per partition > R")
      ->group("Checkpoints")
      ->type_name("R")
      ->check(not_empty("is empty: give a ratio of max to mean, such as 4"));

  split->add_flag("-q,--quiet", o.quiet, "No summary (nor progress) on stderr")
      ->group("Reporting");
  add_progress_options(*split, o);
  split->add_flag("-v,--verbose", o.verbose,
                  "Add stage times and checkpoint counts to the summary")
      ->group("Reporting");
  return split;
}

namespace {

// --force over a checkpoint that cannot be read: it cannot say which files were the earlier
// run's, so those this run does not write stay, and would pass for its output.
void warn_of_files_left(const RunConfig& config) {
  const std::vector<std::string> written = output_file_names(config);
  std::vector<std::string> left;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(config.output_dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name == kStateDirName || name == kSummaryFileName || name == kDeadLetterFileName ||
        std::find(written.begin(), written.end(), name) != written.end()) {
      continue;
    }
    left.push_back(name);
  }
  if (left.empty()) return;
  std::sort(left.begin(), left.end());
  std::string named;
  for (size_t i = 0; i < left.size() && i < 3; ++i) named += (i > 0 ? ", " : "") + left[i];
  if (left.size() > 3) named += fmt::format(" and {} more", left.size() - 3);
  print_warning(fmt::format("{}: the earlier run's checkpoint cannot be read, so its files "
                            "that this run does not write are left as they were: {}; remove "
                            "them if they are that run's",
                            config.output_dir, named));
}

// Whether `command` holds a --name field, {partition} or {partition:SPEC} ({partition:05}, say;
// not jq's {partition: .p}, whose spec would hold a blank).
bool names_partition_field(std::string_view command) {
  constexpr std::string_view kField = "{partition";
  for (size_t at = command.find(kField); at != std::string_view::npos;
       at = command.find(kField, at + 1)) {
    size_t end = at + kField.size();
    if (end < command.size() && command[end] == ':') {
      ++end;
      while (end < command.size() &&
             (std::isalnum(static_cast<unsigned char>(command[end])) != 0 ||
              std::string_view("<>^+-#.").find(command[end]) != std::string_view::npos)) {
        ++end;
      }
    }
    if (end < command.size() && command[end] == '}') return true;
  }
  return false;
}

}  // namespace

Status run_split(const SplitOptions& given) {
  SplitOptions options = given;
  if (!options.dead_letter.empty() && options.dead_letter != "-") {
    // Recorded as an absolute path: a resume may run from another directory.
    std::error_code unknown;  // (no working directory: kept as given, and opening it says so)
    const std::filesystem::path absolute = std::filesystem::absolute(options.dead_letter, unknown);
    if (!unknown) options.dead_letter = absolute.lexically_normal();
  }
  RunConfig config;
  if (Status status = make_run_config(options, config); !status) return status;
  options.threads = config.threads;  // recorded as resolved
  if (Status status = check_inputs(config); !status) return status;
  if (config.to_stdout && config.zstd_level && !config.exec() && ::isatty(STDOUT_FILENO) == 1) {
    // (As zstd itself refuses: the terminal would show binary, and take its control bytes.)
    return Status::error("--compress -o - writes zstd data, which is not for a terminal: send "
                         "standard output to a file or a pipe (> out.ndjson.zst)",
                         {}, kExitUsage);
  }
  if (!given.dead_letter.empty() && config.on_bad != BadLinePolicy::kDeadLetter) {
    print_warning("--dead-letter names where --on-bad dead-letter writes bad lines; under "
                  "--on-bad " + given.on_bad + " none is written, so it changes nothing");
  }
  if (config.exec() && config.exec_per_worker && given.name != SplitOptions{}.name) {
    print_warning("--name names partition files; with --exec-per worker each child's output "
                  "is DIR/worker-NNNNN.ndjson, so it changes nothing");
  }
  if (config.exec() && names_partition_field(config.exec_command)) {
    print_warning("--exec: {partition} is not replaced in the command (only --name has it); "
                  "a child finds its partition in $KEYSHARD_PARTITION, e.g. --exec 'cat > "
                  "part-$KEYSHARD_PARTITION.txt'");
  }
  if (config.salt_by && !config.sequenced_salting()) {
    print_warning("--salt-by picks the sub-key of a salted key; without --salt or --hot-keys "
                  "no key is salted, so it changes nothing");
  }

  // From here a signal is caught: one before the run begins stops it below, in order.
  catch_interrupts();
  const std::string& dir = config.output_dir;
  RunLock lock;
  std::vector<std::string> created_dirs;
  if (config.checkpoints) {
    // The lock first: what DIR holds is only looked at while no other run can change it.
    if (Status status = create_output_directory(dir, &created_dirs); !status) return status;
    if (Status status = lock.acquire(dir, config.exec()); !status) return status;
  }
  // A run refused before it starts, or one that leaves no checkpoint, leaves DIR as it found it.
  struct LeaveNoTrace {
    RunLock& lock;
    const std::vector<std::string>& created_dirs;
    bool armed = true;
    bool started = false;  // the pipeline ran (and may have started --exec children)
    ~LeaveNoTrace() {
      if (!armed) return;
      lock.remove_if_created(started);
      for (const std::string& created : created_dirs) (void)::rmdir(created.c_str());
    }
  } leave_no_trace{lock, created_dirs};
  Checkpoint previous;
  const bool continuing = config.incremental && !config.force && has_checkpoint(dir);
  if (config.checkpoints && !continuing && !config.force && has_checkpoint(dir)) {
    Checkpoint earlier;
    if (Status loaded = load_checkpoint(dir, earlier); !loaded) {
      // (resume could not continue from it either: it says the same)
      return loaded;
    }
    if (earlier.complete) {
      return Status::error(std::string("holds the outputs of a finished run: start over with "
                                       "--force") +
                               (earlier.incremental ? ", or add to them with --incremental" : ""),
                           dir, kExitUsage);
    }
    return Status::error("holds the checkpoint of an earlier run: continue it with `keyshard "
                         "resume " + dir + "`, or start over with --force",
                         dir, kExitUsage);
  }
  if (continuing) {
    // (Before the checks below, which look at the files of the run as it was set up: with
    // --exec-per worker, as many as it had workers.)
    if (Status status = load_checkpoint(dir, previous); !status) return status;
    SplitOptions before;
    if (Status status = restore_options(previous.options, checkpoint_path(dir), before); !status) {
      return status;
    }
    if (!previous.incremental) {
      return Status::error(previous.complete
                               ? "holds the outputs of a finished split without --incremental, "
                                 "which cannot be added to: start over with --force"
                               : "was written by a split without --incremental: continue it "
                                 "with `keyshard resume " + dir + "`, or start over with --force",
                           dir, kExitUsage);
    }
    if (given.threads == 0 && config.exec() && config.exec_per_worker) {
      // One child per worker: without -j, the workers of the last run (not this machine's
      // processor count), so that each child is fed the same partitions.
      options.threads = before.threads;
      config.threads = before.threads;
    }
    if (const std::string difference =
            first_difference(acting_options(before, dir, &options), acting_options(options, dir));
        !difference.empty()) {
      return Status::error("this --incremental run is set up differently from the last one (" +
                               difference + "); use the same options, or start over with --force",
                           dir, kExitUsage);
    }
    if (Status status = check_checkpoint_fits(previous, config, checkpoint_path(dir)); !status) {
      return status;
    }
  }
  // (A run that continues one recorded with a smaller SHARE, from before this floor, goes on.)
  if (!continuing && config.hot_keys_share && *config.hot_keys_share < kMinHotKeyShare) {
    return invalid_hot_keys(options.hot_keys);
  }
  // (Likewise one recorded with --salt and -n 1, from before this was refused.)
  if (!continuing && !config.salts.empty() && config.partitions < 2) {
    return Status::error("--salt spreads a key over the partitions; with -n 1 there is nothing "
                         "to spread it over",
                         {}, kExitUsage);
  }
  if (config.incremental) {
    // A file that does not exist (yet) is skipped with a warning; one that cannot be looked at
    // for another reason (a directory without search permission, a symlink loop), or that is a
    // directory, stops the run before anything is read or written, rather than pass for a
    // missing one or become one of the files the run records.
    for (const std::string& path : config.inputs) {
      struct stat info {};
      if (path == "-") continue;
      if (::stat(path.c_str(), &info) != 0 && errno != ENOENT) {
        return Status::error("cannot look at it: " + errno_text(errno), path);
      }
      if (S_ISDIR(info.st_mode)) return Status::error("is a directory", path);
    }
  }
  // (Before the checks below, which look at every partition's file: with -n far past the limit,
  // that took seconds.)
  if (Status status = check_open_file_limit(config); !status) return status;
  const std::set<std::string> replaced = links_force_replaces(config);  // none without --force
  if (Status status = check_inputs_are_not_outputs(config, replaced); !status) return status;
  if (Status status = check_dead_letter_is_apart(config, replaced); !status) return status;
  if (Status status = check_dead_letter_is_new(config, continuing); !status) return status;
  if (!continuing) {
    if (Status status = check_outputs_are_files(config); !status) return status;
  }
  // (The last moment a signal leaves DIR as it was: from here files are created or removed.)
  if (const int signal_number = interrupt_signal(); signal_number != 0) {
    return interrupted_before_start(signal_number);
  }
  if (Status status = prepare_outputs(config, continuing); !status) return status;
  if (config.checkpoints && config.force) {
    // The earlier run's checkpoint goes first (durably, under --commit sync): a run killed
    // while it removes that run's files then leaves files without a checkpoint, which a later
    // split refuses without --force, never a checkpoint that names files that are gone.
    Checkpoint earlier;
    const bool loaded = load_checkpoint(dir, earlier).ok();
    const bool damaged = !loaded && has_checkpoint(dir);
    if (Status status = remove_checkpoint(dir); !status) return status;
    if (config.commit_sync && (loaded || damaged)) {
      const std::filesystem::path checkpoint_file(checkpoint_path(dir));
      if (Status status = sync_directory(checkpoint_file.parent_path().string()); !status) {
        return status;
      }
    }
    // The earlier run's files this run does not write would pass for its output. Only the
    // files its checkpoint names are touched; a damaged checkpoint names none.
    if (loaded) {
      std::vector<std::string> names;
      for (const OutputState& output : earlier.outputs) names.push_back(output.file);
      if (Status status = remove_stale_outputs(config, names); !status) return status;
    } else if (damaged) {
      warn_of_files_left(config);
    }
    if (Status status = remove_earlier_reports(config); !status) return status;
  }
  if (Status status = unlink_symlinked_outputs(replaced); !status) return status;

  RunStart start;
  start.options = record_options(options);
  // (Before the inputs are looked at; in whole seconds, as some file systems keep file times.)
  start.inputs_seen_ns = file_clock_ns() / 1'000'000'000 * 1'000'000'000;
  if (continuing) {
    // (An older checkpoint does not record it: the time it was written stands in.)
    struct stat written {};
    const int64_t previous_seen =
        previous.inputs_seen_ns != 0 ? previous.inputs_seen_ns
        : ::stat(checkpoint_path(dir).c_str(), &written) == 0 ? modified_ns(written)
                                                               : 0;
    start.inputs = plan_incremental(previous, config.inputs, print_warning, previous_seen);
    renumber_decision_inputs(previous, start.inputs, previous.salt.decisions);
    // The run's summary gives its own numbers: those since the last run that finished (an
    // interrupted one is continued: its part is this run's too), and its heaviest keys are
    // those of its own events.
    previous.stats.hot_key_decisions = previous.salt.decisions;  // their events so far
    if (previous.complete || !previous.run_base) {
      start.run_base = previous.stats;
      start.run_base->heavy_hitters = HeavyHitters();
    } else {
      start.run_base = previous.run_base;
    }
    if (previous.complete) previous.stats.heavy_hitters = HeavyHitters(kHeavyHitterCounters);
    start.resume = &previous;
  } else if (config.incremental) {
    start.inputs = plan_first_incremental(config.inputs, print_warning);
    start.run_base = RunStats(config.partitions);  // nothing before it
  } else {
    for (const std::string& path : config.inputs) {
      start.inputs.push_back(InputStart{InputPosition{path}});
    }
  }
  config.inputs.clear();
  config.input_names.clear();
  config.carried_inputs = static_cast<size_t>(
      std::count_if(start.inputs.begin(), start.inputs.end(),
                    [](const InputStart& input) { return input.carried; }));
  for (const InputStart& input : start.inputs) {
    config.inputs.push_back(input.position.path);
    config.input_names.push_back(input.position.path == "-" ? "<stdin>" : input.position.path);
  }

  if (const int signal_number = interrupt_signal(); signal_number != 0) {
    return interrupted_before_start(signal_number);
  }
  leave_no_trace.started = true;
  RunResult result = run_pipeline(config, config.checkpoints ? &start : nullptr);
  Status status = report_run(config, result, start.run_base ? &*start.run_base : nullptr);
  leave_no_trace.armed = config.checkpoints && !has_checkpoint(dir);
  return status;
}

}  // namespace keyshard
