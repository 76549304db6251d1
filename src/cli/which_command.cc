// `keyshard which`: the partition of each key, from the arguments or one key per stdin line.
#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <string_view>

#include "cli/app.h"
#include "hash/partitioner.h"
#include "util/files.h"

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
    // Read as it comes: after a read that emptied a pipe, the answers so far are written out,
    // so that keys fed one at a time are answered one at a time.
    bool first = true;
    auto answer = [&](std::string_view key) {
      // As split reads --format line and delimited input: a byte order mark before the first
      // key (a file saved on Windows) is not part of it, nor is a carriage return after a key.
      if (first && key.starts_with("\xEF\xBB\xBF")) key.remove_prefix(3);
      first = false;
      if (!key.empty() && key.back() == '\r') key.remove_suffix(1);
      fmt::format_to(std::back_inserter(out), "{}\n", partitioner.partition_of(key));
    };
    if (standard_stream_was_closed(STDIN_FILENO)) {
      return Status::error("standard input is closed; give the keys as arguments, or open it",
                           {}, kExitUsage);
    }
    std::string pending;
    char buffer[1 << 16];
    for (;;) {
      const long got = read_some(STDIN_FILENO, buffer, sizeof buffer);
      if (got < 0) return Status::error("read failed: " + errno_text(errno), "<stdin>");
      if (got == 0) break;
      const size_t unsearched = pending.size();  // (a long key is searched once, not per read)
      pending.append(buffer, static_cast<size_t>(got));
      size_t start = 0;
      for (size_t end, from = unsearched; (end = pending.find('\n', from)) != std::string::npos;
           start = from = end + 1) {
        answer(std::string_view(pending).substr(start, end - start));
      }
      pending.erase(0, start);
      const bool drained = static_cast<size_t>(got) < sizeof buffer;
      if (drained || out.size() >= (1u << 16)) {
        std::fwrite(out.data(), 1, out.size(), stdout);
        out.clear();
        if (drained) std::fflush(stdout);
      }
    }
    if (!pending.empty()) answer(pending);  // a last line without its newline
  }
  std::fwrite(out.data(), 1, out.size(), stdout);  // main() reports a failed write
  return {};
}

}  // namespace keyshard
