// `keyshard which`: the partition of each key, from the arguments or one key per stdin line.
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "cli/app.h"
#include "hash/partitioner.h"
#include "util/files.h"

namespace keyshard {
namespace {

// No split reads a line longer than the largest --max-line-size, so no key is longer: a longer
// line on stdin (a stream without newlines, say) is refused before it takes more memory.
constexpr size_t kLongestKey = size_t{1} << 30;

}  // namespace

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
    // The keys read and not yet answered: a vector, whose reserve() takes what it is asked for
    // (a string's may double it).
    std::vector<char> pending;
    char buffer[1 << 16];
    uint64_t keys_read = 0;
    for (;;) {
      const long got = read_some(STDIN_FILENO, buffer, sizeof buffer);
      if (got < 0) return Status::error("read failed: " + errno_text(errno), "<stdin>");
      if (got == 0) break;
      const size_t unsearched = pending.size();  // (a long key is searched once, not per read)
      const void* newline = std::memchr(buffer, '\n', static_cast<size_t>(got));
      const size_t more = newline != nullptr ? static_cast<size_t>(
                                                   static_cast<const char*>(newline) - buffer)
                                             : static_cast<size_t>(got);
      if (unsearched + more > kLongestKey) {
        std::fwrite(out.data(), 1, out.size(), stdout);  // the answers before it
        return Status::error("a key longer than 1 GiB, the longest line a split reads "
                             "(--max-line-size): is this a stream of keys, one per line?",
                             fmt::format("<stdin>:{}", keys_read + 1));
      }
      if (const size_t needed = unsearched + static_cast<size_t>(got);
          needed > pending.capacity()) {
        // Doubled as it fills, but past a quarter of the longest key grown to the longest at
        // once: doubling to the end would hold a long key twice while the last move copies it.
        const size_t doubled = std::max(needed, 2 * pending.capacity());
        pending.reserve(doubled > kLongestKey / 4 ? kLongestKey + sizeof buffer : doubled);
      }
      pending.insert(pending.end(), buffer, buffer + got);
      const std::string_view text(pending.data(), pending.size());
      size_t start = 0;
      for (size_t end, from = unsearched; (end = text.find('\n', from)) != std::string::npos;
           start = from = end + 1) {
        answer(text.substr(start, end - start));
        ++keys_read;
      }
      pending.erase(pending.begin(), pending.begin() + static_cast<long>(start));
      const bool drained = static_cast<size_t>(got) < sizeof buffer;
      if (drained || out.size() >= (1u << 16)) {
        std::fwrite(out.data(), 1, out.size(), stdout);
        out.clear();
        if (drained) std::fflush(stdout);
      }
    }
    if (!pending.empty()) answer({pending.data(), pending.size()});  // a last line, unended
  }
  std::fwrite(out.data(), 1, out.size(), stdout);  // main() reports a failed write
  return {};
}

}  // namespace keyshard
