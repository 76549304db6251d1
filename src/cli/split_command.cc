// `keyshard split`: its options, grouped as in the man page, and the run: validate, prepare the
// outputs, run the pipeline, report.
#include <fmt/format.h>

#include <cstdio>

#include "cli/app.h"
#include "cli/split_config.h"
#include "insight/summary.h"
#include "pipeline/pipeline.h"
#include "sinks/output_directory.h"

namespace keyshard {

CLI::App* add_split_command(CLI::App& app, SplitOptions& o) {
  CLI::App* split = app.add_subcommand("split", "Partition events by key into N ordered streams");
  split->footer(
      "Examples:\n"
      "  keyshard split -k user_id -n 8 -o out/ events.ndjson logs/*.ndjson.zst\n"
      "  keyshard split -k account.id -k currency -n 16 --hash crc32 -o out/ tx.ndjson\n"
      "  keyshard split -k account -n 16 --exec 'python3 settle.py' -o out/ tx.ndjson\n"
      "  keyshard split --format delimited --delimiter , -k 3 -n 4 -o - < x.csv");

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
  split->add_option("--compress", o.compress, "Compress outputs: zstd or zstd:LEVEL")
      ->group("Output")
      ->type_name("ALGO");
  split->add_option("--annotate", o.annotate, "Add fields: partition, offset, key, salt\n"
                                              "(e.g. partition,offset)")
      ->group("Output")
      ->type_name("FIELDS");
  split->add_flag("--force", o.force, "Write into a non-empty output directory")->group("Output");

  split->add_option("--exec", o.exec,
                    "Feed each partition to its own /bin/sh -c\nCMD; its stdout is the output")
      ->group("Processing")
      ->type_name("CMD");
  split->add_option("--exec-per", o.exec_per, "One child per partition or per worker")
      ->group("Processing")
      ->type_name("UNIT")
      ->check(choice({"partition", "worker"}))
      ->capture_default_str();
  split->add_flag("--allow-early-exit", o.allow_early_exit,
                  "A child may exit (status 0) before its\ninput ends")
      ->group("Processing");

  split->add_option("--on-bad", o.on_bad, "Bad lines: dead-letter, skip or fail\n(exit 65)")
      ->group("Bad lines")
      ->type_name("POLICY")
      ->check(choice({"dead-letter", "skip", "fail"}))
      ->capture_default_str();
  split->add_option("--dead-letter", o.dead_letter,
                    "Dead-letter file (default: in DIR;\nstderr with -o -)")
      ->group("Bad lines")
      ->type_name("FILE");

  split->add_flag("-q,--quiet", o.quiet, "No summary (nor progress) on stderr")
      ->group("Reporting");
  add_progress_options(*split, o);
  split->add_flag("-v,--verbose", o.verbose, "Add per-stage timings to the summary")
      ->group("Reporting");
  return split;
}

Status run_split(const SplitOptions& options) {
  RunConfig config;
  if (Status status = make_run_config(options, config); !status) return status;
  if (Status status = prepare_outputs(config); !status) return status;

  RunResult result = run_pipeline(config);
  if (!result.status) return result.status;

  if (!config.to_stdout) {
    const std::string path = config.output_dir + "/keyshard-summary.json";
    if (Status status = write_file_atomically(path, format_summary_json(result.stats, config));
        !status) {
      return status;
    }
  }
  if (!config.quiet) {
    const std::string text = format_summary_text(result.stats, config);
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
  return {};
}

}  // namespace keyshard
