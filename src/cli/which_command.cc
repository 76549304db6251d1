// `keyshard which`: the partition of each key, from the arguments or one key per stdin line.
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "cli/app.h"
#include "hash/partitioner.h"

namespace keyshard {

CLI::App* add_which_command(CLI::App& app, WhichOptions& o) {
  CLI::App* which = app.add_subcommand("which", "Print the partition of each key");
  which->footer(
      "Examples:\n"
      "  keyshard which -n 8 user_987654\n"
      "  keyshard which -n 12 --hash md5 alice bob carol\n"
      "  cut -f1 keys.tsv | keyshard which -n 1024 --hash jump");
  const std::vector<std::string> hashes(hash_spellings().begin(), hash_spellings().end());
  which->add_option("keys", o.keys, "Key bytes, as split extracts them; none:\none key per stdin line")
      ->type_name("KEY");
  which->add_option("-n,--partitions", o.partitions, "Number of partitions")
      ->group("Partitioning")
      ->type_name("N")
      ->required()
      ->transform(decimal_in(1u, 0x7fffffffu));
  which->add_option("--hash", o.hash, "Partitioner, as for split")
      ->group("Partitioning")
      ->type_name("NAME")
      ->check(CLI::IsMember(hashes).description(""))
      ->capture_default_str();
  return which;
}

Status run_which(const WhichOptions& options) {
  const auto hash = parse_hash_name(options.hash);
  if (!hash) return Status::error("invalid --hash \"" + options.hash + "\"", {}, kExitUsage);
  const Partitioner partitioner(*hash, options.partitions);
  std::string out;
  if (!options.keys.empty()) {
    for (const std::string& key : options.keys) {
      fmt::format_to(std::back_inserter(out), "{}\n", partitioner.partition_of(key));
    }
  } else {
    std::string line;
    while (std::getline(std::cin, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      fmt::format_to(std::back_inserter(out), "{}\n", partitioner.partition_of(line));
      if (out.size() >= (1u << 16)) {
        std::fwrite(out.data(), 1, out.size(), stdout);
        out.clear();
      }
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);  // main() reports a failed write
  return {};
}

}  // namespace keyshard
