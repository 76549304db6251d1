// `keyshard plan`: how many keys and events a resize from N to M partitions would move.
#include <algorithm>
#include <cstdio>

#include "cli/app.h"
#include "cli/run_report.h"
#include "cli/split_config.h"
#include "insight/resize_plan.h"
#include "util/interrupt.h"

namespace keyshard {

CLI::App* add_plan_command(CLI::App& app, PlanOptions& o) {
  CLI::App* plan =
      app.add_subcommand("plan", "Show how many keys move when N partitions become M");
  plan->footer(
      "Examples:\n"
      "  keyshard plan -k user_id --from 8 --to 12 events.ndjson\n"
      "  keyshard plan -k account.id --from 16 --to 15 --json tx.ndjson.zst");
  add_input_options(*plan, o.split);
  add_key_options(*plan, o.split);
  plan->add_option("--from", o.from, "Partitions now")
      ->group("Partitioning")
      ->type_name("N")
      ->required()
      ->transform(decimal_in(1u, 0x7fffffffu));
  plan->add_option("--to", o.to, "Partitions after the resize")
      ->group("Partitioning")
      ->type_name("M")
      ->required()
      ->transform(decimal_in(1u, 0x7fffffffu));
  plan->add_flag("--json", o.json, "The report as JSON")->group("Report");
  return plan;
}

Status run_plan(const PlanOptions& options) {
  SplitOptions input = options.split;
  input.partitions = std::max(options.from, options.to);  // only to satisfy the shared checks
  RunConfig config;
  if (Status status = make_input_config(input, config); !status) return status;
  if (Status status = check_inputs(config); !status) return status;
  ResizePlan plan;
  // ^C (SIGTERM, SIGHUP) stops the reading: the plan then covers the lines read, and says so.
  catch_interrupts();
  if (Status status = compute_resize_plan(config, options.from, options.to, plan); !status) {
    return status;
  }
  const std::string report = options.json ? format_plan_json(plan) : format_plan_text(plan);
  std::fwrite(report.data(), 1, report.size(), stdout);
  warn_if_no_line_has_the_key(config.keys, plan.events, plan.missing_key);
  return interrupted_report(plan.interrupted, plan.lines);
}

}  // namespace keyshard
