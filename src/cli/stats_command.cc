// `keyshard stats`: a dry run of split that writes nothing but its report.
#include <unistd.h>

#include <cstdio>

#include "cli/app.h"
#include "cli/run_report.h"
#include "cli/split_config.h"
#include "insight/stats_report.h"
#include "pipeline/pipeline.h"
#include "util/interrupt.h"

namespace keyshard {

CLI::App* add_stats_command(CLI::App& app, StatsOptions& o) {
  CLI::App* stats = app.add_subcommand("stats", "Report partition load, skew and hot keys");
  stats->footer(
      "Examples:\n"
      "  keyshard stats -k user_id -n 8 events.ndjson\n"
      "  keyshard stats -k account.id -n 16 --hash jump --top 20 --json tx.ndjson.zst");
  add_input_options(*stats, o.split);
  add_key_options(*stats, o.split);
  add_partitioning_options(*stats, o.split);
  stats->add_option("--top", o.top, "Heaviest keys to list")
      ->group("Report")
      ->type_name("K")
      ->transform(decimal_in(1, 10000))
      ->capture_default_str();
  stats->add_option("--what-if-salt", o.sub_keys,
                    "Skew if the listed keys were salted over\nthis many sub-keys")
      ->group("Report")
      ->type_name("K")
      ->transform(decimal_in(2u, 4096u))
      ->capture_default_str();
  stats->add_flag("--json", o.json, "The report as JSON")->group("Report");
  add_progress_options(*stats, o.split);
  return stats;
}

Status run_stats(const StatsOptions& options) {
  RunConfig config;
  if (Status status = make_input_config(options.split, config); !status) return status;
  if (Status status = check_inputs(config); !status) return status;
  config.dry_run = true;
  config.on_bad = BadLinePolicy::kSkip;
  // ^C (SIGTERM, SIGHUP) stops the reading: the report then covers the lines read, and says so.
  catch_interrupts();
  RunResult result = run_pipeline(config);
  if (!result.status) return result.status;
  StatsRequest request{options.top, options.sub_keys, isatty(STDOUT_FILENO) == 1,
                       result.interrupted};
  const std::string report = options.json ? format_stats_json(result.stats, config, request)
                                          : format_stats_text(result.stats, config, request);
  std::fwrite(report.data(), 1, report.size(), stdout);
  warn_if_no_line_has_the_key(config, result.stats);
  return interrupted_report(result.interrupted, result.stats.lines_read);
}

}  // namespace keyshard
