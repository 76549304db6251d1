#include "cli/app.h"

#include <fmt/format.h>
#include <simdjson.h>
#include <zstd.h>

namespace keyshard {

std::string version_text() {
  return fmt::format("keyshard {} (simdjson {}.{}.{}, zstd {})", KEYSHARD_VERSION,
                     static_cast<int>(simdjson::SIMDJSON_VERSION_MAJOR),
                     static_cast<int>(simdjson::SIMDJSON_VERSION_MINOR),
                     static_cast<int>(simdjson::SIMDJSON_VERSION_REVISION), ZSTD_versionString());
}

void build_command_line(CLI::App& app, CommandLine& line) {
  app.name("keyshard");
  app.description("keyshard: split events into N partitions by key, keeping each key's order");
  app.get_formatter()->column_width(26);
  app.set_version_flag("-V,--version", version_text());
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  keyshard split -k user_id -n 8 -o out/ events.ndjson\n"
      "  zstd -dc logs.zst | keyshard split -k account.id -n 16 -o - > ordered.ndjson\n"
      "  keyshard which -n 8 user_987654\n"
      "\nRun 'keyshard COMMAND --help' (or 'keyshard help COMMAND') for its options;\nsee also 'man keyshard'.");

  add_split_command(app, line.split)->final_callback([&line] {
    line.run = [&line] { return run_split(line.split); };
  });
  add_resume_command(app, line.resume)->final_callback([&line] {
    line.run = [&line] { return run_resume(line.resume); };
  });
  add_verify_command(app, line.verify)->final_callback([&line] {
    line.run = [&line] { return run_verify(line.verify); };
  });
  add_stats_command(app, line.stats)->final_callback([&line] {
    line.run = [&line] { return run_stats(line.stats); };
  });
  add_plan_command(app, line.plan)->final_callback([&line] {
    line.run = [&line] { return run_plan(line.plan); };
  });
  add_which_command(app, line.which)->final_callback([&line] {
    line.run = [&line] { return run_which(line.which); };
  });
}

}  // namespace keyshard
