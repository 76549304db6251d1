#include "cli/run_report.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "checkpoint/checkpoint_store.h"
#include "insight/summary.h"
#include "sinks/output_directory.h"
#include "util/interrupt.h"
#include "util/number_text.h"

namespace keyshard {
namespace {

// Whether `path` is this process's standard input: "-", or a name for it such as /dev/stdin
// when it is a stream (a file named so is read again from its start by resume).
bool is_standard_input(const std::string& path) {
  if (path == "-") return true;
  struct stat named {}, input {};
  return ::stat(path.c_str(), &named) == 0 && ::fstat(STDIN_FILENO, &input) == 0 &&
         !S_ISREG(input.st_mode) && named.st_dev == input.st_dev && named.st_ino == input.st_ino;
}

// A figure and the limit it passed, as text. The limit as the user wrote it (to 15 significant
// digits, so that 0.12345% does not come back as 0.12344999999999999%). The figure without an
// exponent, to 3 significant digits as the summary shows a skew (2.29), or to as many more as it
// takes to read as above the limit (1.333 above 1.33, not 1.33).
std::pair<std::string, std::string> figures_apart(double value, double limit) {
  std::string bound = fmt::format("{:.15g}", limit);
  const int magnitude = value > 0 ? static_cast<int>(std::floor(std::log10(value))) : 0;
  for (int digits = 3; digits <= 17; ++digits) {
    std::string shown = fmt::format("{:.{}f}", value, std::max(0, digits - 1 - magnitude));
    if (std::strtod(shown.c_str(), nullptr) > limit) return {std::move(shown), std::move(bound)};
  }
  return {fmt::format("{}", value), std::move(bound)};
}

// --max-bad and --max-skew, checked once the run and its last checkpoint are done. When both
// are passed, both are said, and the status is --max-bad's.
Status check_guardrails(const RunConfig& config, const RunStats& stats) {
  const uint64_t bad = stats.bad_lines();
  const char* complete =
      config.checkpoints ? "the outputs and the checkpoint are complete" : "the output is complete";
  std::string too_bad;
  if (config.max_bad_lines && bad > *config.max_bad_lines) {
    too_bad = fmt::format("{} bad line{}, more than --max-bad {}", with_commas(bad),
                          bad == 1 ? "" : "s",
                          *config.max_bad_lines);
  } else if (config.max_bad_share &&
             // Above the limit by more than the rounding of the two to doubles: 7 of 1,000
             // lines are not more than 0.7%, though 7/1000 and 0.7/100 differ in the last bit.
             share_of(bad, stats.lines_read) > *config.max_bad_share * (1 + 1e-12)) {
    const auto [share, limit] =
        figures_apart(100 * share_of(bad, stats.lines_read), 100 * *config.max_bad_share);
    too_bad = fmt::format("{} bad line{} of {} ({}%), more than --max-bad {}%",
                          with_commas(bad), bad == 1 ? "" : "s", with_commas(stats.lines_read),
                          share, limit);
  }
  std::string too_skewed;
  if (config.max_skew && stats.skew() > *config.max_skew) {
    const auto [skew, limit] = figures_apart(stats.skew(), *config.max_skew);
    too_skewed = fmt::format("skew {} (max/mean events per partition) is above --max-skew {}; "
                             "see `keyshard stats` for the hot keys",
                             skew, limit);
  }
  if (!too_bad.empty()) {
    Status status = Status::error(too_bad + "; " + complete, {}, kExitTooManyBad);
    return too_skewed.empty() ? status : std::move(status).also("and " + too_skewed);
  }
  if (!too_skewed.empty()) return Status::error(too_skewed, {}, kExitSkewed);
  return {};
}

}  // namespace

void warn_if_no_line_has_the_key(const KeySpec& keys, uint64_t with_key, uint64_t without_key) {
  if (with_key != 0 || without_key == 0 || keys.format == InputFormat::kLine) return;
  std::string named;
  bool dotted = false;
  for (const KeyPath& path : keys.paths) {
    // Quoted as a shell would need it, so that a space or a quote in it shows.
    const bool plain = std::all_of(path.spelling.begin(), path.spelling.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || std::strchr("_-./~\\", c);
    });
    const std::string shown = plain && !path.spelling.empty() ? path.spelling
                                                                : "'" + path.spelling + "'";
    named += (named.empty() ? "-k " : " -k ") + shown;
    dotted = dotted || path.spelling.find('.') != std::string::npos;
  }
  for (const uint32_t field : keys.fields) {
    named += (named.empty() ? "-k " : " -k ") + std::to_string(field);
  }
  const bool json = keys.format == InputFormat::kJson;
  print_warning(fmt::format(
      "no line has the key {} ({} line{} without it): {}", named, without_key,
      without_key == 1 ? "" : "s",
      !json    ? "fields are numbered from 1, split at --delimiter (a tab unless given)"
      : dotted ? "is it spelt as in the events? (a dot separates nested fields; a name that "
                 "holds a dot is written with \\., e.g. -k 'user\\.id')"
               : "is it spelt as in the events? (a nested field is a dotted path, e.g. -k "
                 "user.id)"));
}

void warn_if_no_line_has_the_key(const RunConfig& config, const RunStats& stats) {
  const KeySpec& keys = config.keys;
  const auto bad = [&stats](BadReason reason) {
    return stats.bad_by_reason[static_cast<size_t>(reason)];
  };
  const uint64_t not_json = bad(BadReason::kInvalidJson) + bad(BadReason::kNotObject);
  if (keys.format == InputFormat::kJson && stats.events_written() == 0 && not_json > 0 &&
      bad(BadReason::kMissingKey) == 0) {
    const auto lines = [](uint64_t count) {
      return fmt::format("{} line{}", count, count == 1 ? "" : "s");
    };
    if (stats.invalid_objects * 2 >= not_json) {
      // Lines meant as objects, most of them, that are not well-formed (single quotes, a
      // trailing comma, a lone surrogate…): the advice below would be beside the point.
      const std::string where =
          config.dry_run ? "keyshard split writes each one's reason in its dead letters"
          : config.on_bad == BadLinePolicy::kSkip
              ? "--on-bad fail stops at the first and says why"
          : config.dead_letter_path.empty()
              ? "each one's dead letter on standard error says why"
              : "each one's dead letter in " + config.dead_letter_path + " says why";
      const bool one = stats.invalid_objects == 1;
      print_warning(fmt::format("no line is a valid JSON object ({} {} as one but {} not "
                                "well-formed JSON): {}",
                                lines(stats.invalid_objects), one ? "begins" : "begin",
                                one ? "is" : "are", where));
      return;
    }
    // Most likely not JSON lines at all (CSV, plain log lines, one JSON document over many
    // lines): every line went to the dead letters.
    print_warning(fmt::format("no line is a JSON object ({} not one): is the input JSON "
                              "lines, an object a line? A JSON array or a document over many "
                              "lines becomes that with jq -c '.[]' or jq -c .; for other text, "
                              "use --format delimited or --format line",
                              lines(not_json)));
    return;
  }
  // (With --missing-key partition:P, some events written are without the key.)
  const uint64_t events = stats.events_written();
  const uint64_t routed = std::min(events, stats.missing_key_routed);
  warn_if_no_line_has_the_key(
      keys, events - routed,
      stats.bad_by_reason[static_cast<size_t>(BadReason::kMissingKey)] + routed);
}

namespace {

// A --salt KEY that no event of the whole run had: most likely spelt otherwise than the
// events' key, so nothing was spread.
void warn_of_salt_keys_unseen(const RunConfig& config, const RunStats& stats) {
  if (stats.events_written() == 0) return;  // (then the -k warning, if any, says it all)
  for (size_t i = 0; i < config.salts.size() && i < stats.salted_events.size(); ++i) {
    if (stats.salted_events[i] != 0) continue;
    print_warning(fmt::format(
        "--salt {}:{}: no event has the key \"{}\", so nothing was salted: is it spelt as the "
        "key stands in the events? (a string key without its quotes, a number as written)",
        config.salts[i].first, config.salts[i].second, config.salts[i].first));
  }
}

}  // namespace

Status interrupted_report(int signal_number, uint64_t lines) {
  if (signal_number == 0) return {};
  return Status::error(fmt::format("interrupted by {}: the report covers the {} line{} read "
                                   "before it",
                                   interrupt_signal_name(signal_number), with_commas(lines),
                                   lines == 1 ? "" : "s"),
                       {}, kExitInterrupted + signal_number);
}

Status interrupted_before_start(int signal_number) {
  return Status::error("interrupted before the run began: no input was read", {},
                       kExitInterrupted + signal_number);
}

Status report_run(const RunConfig& config, const RunResult& result, const RunStats* before) {
  // What resume needs besides DIR: a stream read on standard input, given again; or one read
  // from a named FIFO, written there again.
  const bool read_stdin =
      std::any_of(config.inputs.begin(), config.inputs.end(), is_standard_input);
  std::string stream_again =
      read_stdin ? " (with the same stream on its standard input, from its start)" : "";
  for (const std::string& path : config.inputs) {
    struct stat info {};
    if (!stream_again.empty()) break;
    if (::stat(path.c_str(), &info) == 0 && S_ISFIFO(info.st_mode)) {
      stream_again = " (with the same stream written to " + path + " again, from its start)";
    }
  }
  // A failure at run time (an input gone, a full disk): say how to go on once it is fixed.
  auto with_hint = [&config, &result, &stream_again, read_stdin](Status failure) {
    if (result.corrupt_frame_covered && config.checkpoints && has_checkpoint(config.output_dir)) {
      // The checkpoint vouches for lines of a zstd frame that failed its check (at its end, or
      // further on), which may be wrong: no run may go on from it, even once the input is
      // mended (a resume checks only the bytes around where it goes on). Whatever stopped the
      // run first (a bad line decoded from the damage, say).
      const std::string why =
          "the run's last checkpoint covers lines of a zstd frame of " +
          result.corrupt_frame_input + " that were read before its damage showed (a frame is "
          "checked as a whole, at its end), so the outputs may hold wrong events";
      if (Status removed = remove_checkpoint(config.output_dir); !removed) {
        return std::move(failure).also(why + ": do not resume it; " + removed.message() +
                                       "; once the input is mended, start over with --force");
      }
      return std::move(failure).also(why + ": the checkpoint is removed, and the run cannot be "
                                           "resumed; once the input is mended, start over with "
                                           "--force");
    }
    if (failure.exit_code() == kExitBadInput && config.checkpoints &&
        has_checkpoint(config.output_dir)) {
      // --on-bad fail: the line that stopped the run was not taken; its checkpoint stands. A
      // file is continued only as the same file: one written anew (sed -i) is another.
      const bool only_stdin = read_stdin && config.inputs.size() == 1;
      return std::move(failure).also(
          std::string(only_stdin ? "once that line is corrected in the stream, "
                                 : "once that line is corrected in the same file (not in a "
                                   "new one, as `sed -i` and most editors write), ") +
          (config.incremental ? "the next --incremental run, or " : "") + "`keyshard resume " +
          config.output_dir + "`" +
          (only_stdin ? " (with that stream on its standard input, from its start)"
                      : stream_again) +
          " continues the run from its last checkpoint; or start over with --force and "
          "--on-bad dead-letter, which sets bad lines aside");
    }
    if (failure.exit_code() != kExitFailure || !config.checkpoints) return failure;
    // (Another run may be writing DIR: nothing in it is touched, and the message says it all.)
    if (failure.cause() == Cause::kLockLost) return failure;
    // (has_checkpoint: DIR is still the run's, not removed or replaced meanwhile.)
    if (result.fresh && result.wrote_checkpoint && result.stats.stage_times.chunks == 0 &&
        result.interrupted == 0 && has_checkpoint(config.output_dir) &&
        remove_checkpoint(config.output_dir)) {
      // Stopped before it took in a line (a mistyped input name, say): its checkpoint records only
      // the empty start, from which a resume would do what a new run does. So the checkpoint
      // goes, with the files the run created, and the retry needs no --force.
      for (const std::string& path : result.created_files) (void)::unlink(path.c_str());
      return std::move(failure).also("no line was processed, so no checkpoint is kept; once "
                                     "that is fixed, run it again");
    }
    Checkpoint last;
    if (load_checkpoint(config.output_dir, last)) {
      if (failure.cause() == Cause::kOutputChanged) {
        // No run can go on from a checkpoint whose outputs are not what it records.
        return std::move(failure).also("a run goes on only from outputs that hold what the "
                                       "checkpoint records: put the file back as it was, or "
                                       "start over with --force");
      }
      if (last.complete) {
        if (!config.incremental) return failure;
        // A later --incremental run that failed before it could write its first checkpoint
        // (which it writes before any output): the next run starts again where the last one
        // ended.
        return std::move(failure).also("once that is fixed, the next --incremental run "
                                       "continues from where the last one ended");
      }
      if (failure.cause() == Cause::kInputChanged) {
        // (resume refused an input: the file itself must come back; a copy is another file)
        return std::move(failure).also("resume continues the very inputs the run read (the "
                                       "same file, not a copy; the same stream on standard "
                                       "input): give it that input, or start over with --force");
      }
      // resume keeps the recorded options: a failing --exec command, or a --max-line-size too
      // small, is changed by starting over.
      std::string start_over;
      if (failure.cause() == Cause::kLineTooLong) {
        start_over = "; to raise --max-line-size, start over with --force";
      } else if (config.exec()) {
        start_over = "; to change the command or other options, start over with --force";
      }
      return std::move(failure).also(
          "once that is fixed, " +
          std::string(config.incremental ? "the next --incremental run, or " : "") +
          "`keyshard resume " + config.output_dir + "`" + stream_again +
          " continues the run from its last checkpoint" + start_over);
    }
    if (has_checkpoint(config.output_dir)) return failure;  // one that cannot be read
    if (result.wrote_checkpoint) {
      return std::move(failure).also("the checkpoint this run wrote in " + config.output_dir +
                                     " is gone: if the directory was moved, `keyshard resume "
                                     "NEWDIR`" + stream_again +
                                     " continues the run from there; if it was removed, run it "
                                     "again");
    }
    // Failed before its first checkpoint: nothing can resume it, so what it created goes, and
    // the retry needs no --force.
    for (const std::string& path : result.created_files) (void)::unlink(path.c_str());
    return std::move(failure).also("no checkpoint was written, so the run cannot be resumed; "
                                   "once that is fixed, run it again");
  };
  if (result.interrupted != 0 && !config.checkpoints) {
    // Standard output (or the children) got every event read, each line whole; the rest of the
    // input was not read. A reader of standard output gone meanwhile is no error of its own.
    const int status = kExitInterrupted + result.interrupted;
    if (result.status.quiet()) return Status::error("interrupted", {}, status);
    if (!result.status) return result.status;
    const uint64_t lines = result.stats.lines_read;
    return Status::error(fmt::format("interrupted: stopped reading after {} line{}, and wrote "
                                     "out every event among them",
                                     with_commas(lines), lines == 1 ? "" : "s"),
                         {}, status);
  }
  if (!result.status) return with_hint(result.status);
  if (result.interrupted != 0) {
    if (result.last_checkpoint) {
      if (Status status = write_checkpoint(config.output_dir, *result.last_checkpoint); !status) {
        return status;
      }
    }
    return Status::error("interrupted; resume with: keyshard resume " + config.output_dir +
                             stream_again +
                             (config.incremental ? " (or the next --incremental run)" : ""),
                         {}, kExitInterrupted + result.interrupted);
  }
  RunStats stats = result.stats;
  if (before) stats.subtract(*before);
  if (!config.to_stdout) {
    const std::string path = config.output_dir + "/" + kSummaryFileName;
    if (Status status =
            write_file_atomically(path, format_summary_json(stats, config), config.commit_sync);
        !status) {
      return with_hint(status);
    }
  }
  // Complete only once the summary is in place: a crash before this resumes and writes both.
  if (result.last_checkpoint) {
    if (Status status = write_checkpoint(config.output_dir, *result.last_checkpoint); !status) {
      // The run has not ended: no summary yet (resume writes it).
      (void)::unlink((config.output_dir + "/" + kSummaryFileName).c_str());
      return with_hint(status);
    }
  }
  if (!config.quiet) {
    const std::string text = format_summary_text(stats, config);
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
  // (Also one that came during the last sync and checkpoint, after the pipeline ended.)
  const int late = result.interrupted_late != 0 ? result.interrupted_late : interrupt_signal();
  if (late != 0) {
    print_warning(fmt::format("{} came once the whole input was read, so the run finished: it "
                              "is complete",
                              interrupt_signal_name(late)));
  }
  // (Over every run an --incremental one continues: its -k matched theirs.)
  warn_if_no_line_has_the_key(config, result.stats);
  warn_of_salt_keys_unseen(config, result.stats);
  return check_guardrails(config, stats);
}

}  // namespace keyshard
