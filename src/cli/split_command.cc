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
  CLI::App* split = app.add_subcommand(
      "split", "Partition events by key into N ordered partition streams");
  split->footer(
      "Examples:\n"
      "  keyshard split -k user_id -n 8 -o out/ events.ndjson logs/*.ndjson.zst\n"
      "  keyshard split -k account.id -k currency -n 16 --hash crc32 -o out/ tx.ndjson\n"
      "  cat access.log | keyshard split --format delimited --delimiter space -k 1 -n 4 -o -");

  const std::vector<std::string> hashes(hash_spellings().begin(), hash_spellings().end());

  split->add_option("inputs", o.inputs, "Input files, read in order; none or - is stdin")
      ->group("Input")
      ->type_name("FILE");
  split->add_option("--format", o.format, "Input format: json, delimited or line")
      ->group("Input")
      ->check(CLI::IsMember({"json", "delimited", "line"}))
      ->capture_default_str();
  split->add_option("--delimiter", o.delimiter, "Field delimiter for --format delimited")
      ->group("Input")
      ->type_name("CHAR")
      ->capture_default_str();
  split->add_flag("--no-validate", o.no_validate,
                  "Trust the input: find the key without validating each whole line")
      ->group("Input");
  split->add_option("--max-line-size", o.max_line_size, "Longest line accepted")
      ->group("Input")
      ->type_name("SIZE")
      ->capture_default_str();
  split->add_option("--chunk-size", o.chunk_size)->group("");

  split->add_option("-k,--key", o.keys,
                    "Key: a dotted path (account.id), a JSON Pointer (/account/id) or, for "
                    "--format delimited, a field number; repeat for a composite key")
      ->group("Keys")
      ->type_name("PATH")
      ->take_all();
  split->add_option("--missing-key", o.missing_key,
                    "An event without the key is a bad line (bad) or goes to partition P")
      ->group("Keys")
      ->type_name("bad|partition:P")
      ->capture_default_str();

  split->add_option("-n,--partitions", o.partitions, "Number of partitions")
      ->group("Partitioning")
      ->required()
      ->check(CLI::Range(1u, 1u << 20));
  split->add_option("--hash", o.hash, "Partitioner: murmur2 (alias kafka), crc32 (alias "
                                      "consistent), fnv1a, md5, xxh3 or jump")
      ->group("Partitioning")
      ->check(CLI::IsMember(hashes))
      ->capture_default_str();
  split->add_option("-j,--threads", o.threads, "Worker threads (default: all cores)")
      ->group("Partitioning")
      ->check(CLI::Range(1u, 256u));

  split->add_option("-o,--output", o.output, "Output directory, or - for stdout (input order)")
      ->group("Output")
      ->required()
      ->type_name("DIR|-");
  split->add_option("--name", o.name, "Partition file name template")
      ->group("Output")
      ->type_name("TEMPLATE")
      ->capture_default_str();
  split->add_option("--compress", o.compress, "Compress outputs: zstd or zstd:LEVEL")
      ->group("Output")
      ->type_name("zstd[:LEVEL]");
  split->add_option("--annotate", o.annotate,
                    "Add _partition and/or _offset fields to each event")
      ->group("Output")
      ->type_name("partition,offset");
  split->add_flag("--force", o.force, "Write into a non-empty output directory")->group("Output");

  split->add_option("--on-bad", o.on_bad,
                    "Bad lines: write to the dead-letter file, skip (count only) or fail "
                    "(exit 65)")
      ->group("Bad lines")
      ->check(CLI::IsMember({"dead-letter", "skip", "fail"}))
      ->capture_default_str();
  split->add_option("--dead-letter", o.dead_letter,
                    "Dead-letter file (default: DIR/dead-letter.ndjson; stderr with -o -)")
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
