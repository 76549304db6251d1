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
  app.description(
      "keyshard: split newline-delimited events into N partitions by key, keeping every key's "
      "events in input order.");
  app.set_version_flag("-V,--version", version_text());
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  keyshard split -k user_id -n 8 -o out/ events.ndjson\n"
      "  zstd -dc logs.zst | keyshard split -k account.id -n 16 -o - > ordered.ndjson\n"
      "  keyshard which -n 8 user_987654\n"
      "\nRun 'keyshard SUBCOMMAND --help' for a subcommand's options; 'man keyshard' for more.");

  add_split_command(app, line.split)->final_callback([&line] {
    line.run = [&line] { return run_split(line.split); };
  });
  add_which_command(app, line.which)->final_callback([&line] {
    line.run = [&line] { return run_which(line.which); };
  });
}

}  // namespace keyshard
