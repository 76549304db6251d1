// `keyshard resume DIR`: continues the run that DIR's checkpoint describes, with the options it
// recorded. Outputs are cut back to the recorded sizes, each input is repositioned (a seek for a
// plain file; decompress-and-skip for zstd; skip-and-check for stdin, which must replay the same
// stream), counters and salting go on, and the finished outputs are those of an uninterrupted
// run. With --exec, events after the checkpoint are fed to the children again (at-least-once).
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>

#include "checkpoint/checkpoint_store.h"
#include "cli/app.h"
#include "cli/option_values.h"
#include "cli/recorded_options.h"
#include "cli/run_report.h"
#include "cli/split_config.h"
#include "sinks/output_directory.h"
#include "sinks/overlap_checks.h"
#include "util/files.h"
#include "util/interrupt.h"

namespace keyshard {

CLI::App* add_resume_command(CLI::App& app, ResumeOptions& o) {
  CLI::App* resume =
      app.add_subcommand("resume", "Continue a split from its last checkpoint");
  resume->footer(
      "Examples:\n"
      "  keyshard resume out/\n"
      "  zstd -dc events.zst | keyshard resume out/    # a run that read stdin\n"
      "  keyshard resume -j 4 -q out/");
  resume->add_option("dir", o.dir, "The output directory of the run")
      ->required()
      ->type_name("DIR");
  resume->add_option("-j,--threads", o.threads, "Worker threads (default: as recorded)")
      ->group("Partitioning")
      ->type_name("N")
      ->transform(decimal_in(1u, kMaxThreads));
  resume->add_flag("-q,--quiet", o.quiet, "No summary (nor progress) on stderr")
      ->group("Reporting");
  add_progress_options(*resume, o.progress, o.no_progress);
  resume->add_flag("-v,--verbose", o.verbose,
                   "Add stage times and checkpoint counts to the summary")
      ->group("Reporting");
  return resume;
}

Status run_resume(const ResumeOptions& o) {
  if (o.progress && o.no_progress) return Status::error(kProgressConflict, {}, kExitUsage);
  if (o.dir.empty()) return usage(kEmptyDir);
  catch_interrupts();  // (one before the run begins stops it below, in order)
  std::string dir = without_trailing_slashes(o.dir);
  Checkpoint checkpoint;
  if (Status status = load_checkpoint(dir, checkpoint); !status) return status;
  // Read again under the lock: a run that held it may have moved the checkpoint on.
  RunLock lock;
  if (Status status = lock.acquire(dir, checkpoint.exec); !status) {
    // A finished run needs no lock to say so: its DIR may be read-only by now. (One that
    // another run holds may be moving on: that run's lock says so.)
    if (!checkpoint.complete || status.exit_code() == kExitLocked) return status;
  } else if (Status status = load_checkpoint(dir, checkpoint); !status) {
    return status;
  }
  if (checkpoint.complete) {
    if (!o.quiet) {
      std::fprintf(stderr, "keyshard: %s: the run is complete; nothing to resume\n",
                   visible_controls(dir).c_str());
    }
    return {};
  }
  // (Else it would find out at the very end, with the summary, and the work would be lost.)
  if (::access(dir.c_str(), W_OK) != 0) {
    return Status::error("cannot write in it: " + errno_text(errno) +
                             " (resume writes the summary and its checkpoints there)",
                         dir);
  }
  const std::string state = dir + "/" + kStateDirName;
  if (::access(state.c_str(), W_OK) != 0) {
    return Status::error("cannot write in it: " + errno_text(errno) +
                             " (resume writes its checkpoints there)",
                         state);
  }

  // The run goes on where it started, so that its relative paths (inputs, an --exec command)
  // mean what they meant, wherever resume is started from.
  std::error_code error;
  const std::filesystem::path here = std::filesystem::current_path(error);
  if (!checkpoint.working_directory.empty() && !error && here != checkpoint.working_directory) {
    const std::string absolute_dir = std::filesystem::absolute(dir, error).string();
    if (!error && ::chdir(checkpoint.working_directory.c_str()) == 0) {
      dir = absolute_dir;
    } else if (!error) {
      print_warning("the run started in " + checkpoint.working_directory +
                    ", which cannot be entered now (" + errno_text(errno) +
                    "); its relative paths are taken from here");
    }
  }

  SplitOptions options;
  if (Status status = restore_options(checkpoint.options, checkpoint_path(dir), options);
      !status) {
    return status;
  }
  options.output = dir;
  if (checkpoint.dead_letter && !options.dead_letter.empty() &&
      !checkpoint.dead_letter->file.starts_with('/')) {
    // A dead-letter file named inside DIR is recorded by its name there: it is where DIR is
    // now, which may have moved since.
    std::error_code unknown;
    const std::filesystem::path inside =
        std::filesystem::absolute(dir, unknown) / checkpoint.dead_letter->file;
    if (!unknown) options.dead_letter = inside.lexically_normal().string();
  }
  options.inputs.clear();
  for (const InputPosition& input : checkpoint.inputs) options.inputs.push_back(input.path);
  if (o.threads != 0 && o.threads != options.threads && !options.exec.empty() &&
      options.exec_per == "worker") {
    return Status::error(fmt::format("cannot resume with -j {}: with --exec-per worker, each of "
                                     "the run's {} workers feeds its child the partitions it "
                                     "owns, so -j must stay {} (or be left out)",
                                     o.threads, options.threads, options.threads),
                         dir, kExitUsage);
  }
  if (o.threads != 0) options.threads = o.threads;
  options.quiet = o.quiet;
  options.progress = o.progress;
  options.no_progress = o.no_progress;
  options.verbose = o.verbose;
  RunConfig config;
  if (Status status = make_run_config(options, config); !status) {
    return Status::error("the recorded options are refused: " + status.reason(),
                         checkpoint_path(dir))
        .also("this keyshard cannot continue that run: start it over with --force");
  }
  if (Status status = check_checkpoint_fits(checkpoint, config, checkpoint_path(dir)); !status) {
    return status;
  }
  if (Status status = check_open_file_limit(config, true); !status) return status;
  if (Status status = check_inputs_are_not_outputs(config); !status) return status;
  // (Standard error may be the dead-letter file now, as it may not be for the run: `2>>` it.)
  if (Status status = check_dead_letter_is_apart(config); !status) return status;
  for (size_t i = checkpoint.current; i < checkpoint.inputs.size(); ++i) {
    if (checkpoint.inputs[i].path != "-") continue;
    if (standard_stream_was_closed(STDIN_FILENO)) {
      // As for split: refused before anything is written.
      return Status::error("standard input is closed; the run reads its stream again from "
                           "its start: give it on standard input",
                           {}, kExitUsage);
    }
    if (::isatty(STDIN_FILENO) == 1) {
      // As for split, which warns too: the run would seem to hang (the stream was forgotten).
      print_warning("reading the run's stream from the terminal: it reads that stream again "
                    "from its start, so give it on standard input (keyshard resume " +
                    dir + " < FILE, or a pipe)");
    }
    break;
  }

  if (config.incremental) {
    // A log rotated since the interruption: reading the file now at its name from the start
    // would skip the rest of the rotated one. The next --incremental run finishes that first.
    for (size_t i = checkpoint.current; i < checkpoint.inputs.size(); ++i) {
      const InputPosition& input = checkpoint.inputs[i];
      if (input.device == 0 || input.path == "-") continue;
      struct stat now {};
      std::string what;
      if (::stat(input.path.c_str(), &now) != 0) {
        if (errno == ENOENT && input.offset > 0) what = "is not there any more";
      } else if (static_cast<uint64_t>(now.st_dev) != input.device ||
                 static_cast<uint64_t>(now.st_ino) != input.inode) {
        what = "is another file than the one the interrupted run was reading";
      }
      if (!what.empty()) {
        return Status::error(what + " (rotated?), and resume continues the same files only; "
                                    "run the next `keyshard split --incremental` with the run's "
                                    "options instead: it finishes the rotated file first",
                             input.path);
      }
    }
  }
  config.carried_inputs = checkpoint.carried;  // neither read nor shown
  RunStart start;
  start.options = checkpoint.options;
  start.inputs_seen_ns = checkpoint.inputs_seen_ns;  // the run goes on with the inputs it saw
  start.resume = &checkpoint;
  start.run_base = checkpoint.run_base;  // an --incremental run's summary: its own numbers
  for (uint32_t i = 0; i < checkpoint.inputs.size(); ++i) {
    InputStart input{checkpoint.inputs[i], config.incremental};
    input.finished = i < checkpoint.current;
    input.carried = i < checkpoint.carried;
    start.inputs.push_back(std::move(input));
  }
  if (const int signal_number = interrupt_signal(); signal_number != 0) {
    return interrupted_before_start(signal_number);
  }
  const RunResult result = run_pipeline(config, &start);
  return report_run(config, result, start.run_base ? &*start.run_base : nullptr);
}

}  // namespace keyshard
