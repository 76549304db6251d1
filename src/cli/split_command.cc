// `keyshard split`: its options, grouped as in the man page, and the run: validate, prepare the
// outputs, run the pipeline, report.
#include <fmt/format.h>

#include <cstdio>

#include "cli/app.h"
#include "cli/split_config.h"
#include "hash/partitioner.h"
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

  const std::vector<std::string> hashes(hash_spellings().begin(), hash_spellings().end());
  auto choice = [](std::vector<std::string> names) {
    return CLI::IsMember(std::move(names)).description("");  // the choices are in the text
  };

  split->add_option("inputs", o.inputs, "Input files in order; none or - is stdin")
      ->group("Input")
      ->type_name("FILE");
  split->add_option("--format", o.format, "json, delimited or line")
      ->group("Input")
      ->type_name("FORMAT")
      ->check(choice({"json", "delimited", "line"}))
      ->capture_default_str();
  split->add_option("--delimiter", o.delimiter, "Field delimiter: a character, tab or space")
      ->group("Input")
      ->type_name("CHAR")
      ->capture_default_str();
  split->add_flag("--no-validate", o.no_validate, "Find the key without validating each line")
      ->group("Input");
  split->add_option("--max-line-size", o.max_line_size, "Longest line accepted")
      ->group("Input")
      ->type_name("SIZE")
      ->capture_default_str();
  split->add_option("--chunk-size", o.chunk_size)->group("");

  split->add_option("-k,--key", o.keys,
                    "Key path (a.b or /a/b), or field number;\nrepeat for a composite key")
      ->group("Keys")
      ->type_name("PATH")
      ->allow_extra_args(false);  // -k takes one path; what follows is an input
  split->add_option("--missing-key", o.missing_key,
                    "Keyless events: bad (a bad line), or\npartition:P (send to partition P)")
      ->group("Keys")
      ->type_name("POLICY")
      ->capture_default_str();

  split->add_option("-n,--partitions", o.partitions, "Number of partitions")
      ->group("Partitioning")
      ->type_name("N")
      ->required()
      ->check(CLI::Range(1u, 1u << 20).description(""));
  split->add_option("--hash", o.hash,
                    "murmur2 (alias kafka), crc32 (alias\nconsistent), fnv1a, md5, xxh3 or jump")
      ->group("Partitioning")
      ->type_name("NAME")
      ->check(choice(hashes))
      ->capture_default_str();
  split->add_option("-j,--threads", o.threads, "Worker threads (default: all cores)")
      ->group("Partitioning")
      ->type_name("N")
      ->check(CLI::Range(1u, 256u).description(""));

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
  split->add_option("--annotate", o.annotate, "Add fields: partition, offset, key\n"
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

  split->add_flag("-q,--quiet", o.quiet, "No summary on stderr")->group("Reporting");
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
