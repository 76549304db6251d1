// The options that split, stats and plan share: the input, the key and the partitioner. One
// definition keeps their help, defaults and checks identical.
#include "cli/app.h"
#include "hash/partitioner.h"

namespace keyshard {
namespace {

CLI::Validator choice(std::vector<std::string> names) {
  return CLI::IsMember(std::move(names)).description("");  // the choices are in the text
}

}  // namespace

CLI::Validator not_empty(std::string refusal) {
  return CLI::Validator(
      [refusal = std::move(refusal)](const std::string& value) {
        return value.empty() ? refusal : std::string();
      },
      "");
}

CLI::Validator not_blank(std::string refusal) {
  return CLI::Validator(
      [refusal = std::move(refusal)](const std::string& value) {
        return value.find_first_not_of(" \t\r\n") == std::string::npos ? refusal : std::string();
      },
      "");
}

CLI::Validator decimal_in(uint64_t low, uint64_t high) {
  // CLI11 reads a leading 0 as octal and 0x as hex: `-n 010` would be 8 partitions. Counts
  // are decimal, leading zeros and all.
  return CLI::Validator(
      [low, high](std::string& value) -> std::string {
        const size_t first = std::min(value.find_first_not_of('0'), value.size() - 1);
        const bool digits = !value.empty() && value.size() - first <= 19 &&
                            value.find_first_not_of("0123456789") == std::string::npos;
        const uint64_t number = digits ? std::stoull(value.substr(first)) : 0;
        if (!digits || number < low || number > high) {
          return "Value " + value + " is not a whole number from " + std::to_string(low) +
                 " to " + std::to_string(high);
        }
        value.erase(0, first);
        return {};
      },
      "");
}

void add_input_options(CLI::App& app, SplitOptions& o) {
  app.add_option("inputs", o.inputs, "Input files in order; none or - is stdin")
      ->group("Input")
      ->type_name("FILE");
  app.add_option("--format", o.format, "json, delimited or line")
      ->group("Input")
      ->type_name("FORMAT")
      ->check(choice({"json", "delimited", "line"}))
      ->capture_default_str();
  app.add_option("--delimiter", o.delimiter, "Field delimiter: a character, tab or space")
      ->group("Input")
      ->type_name("CHAR")
      ->capture_default_str()
      ->each([&o](const std::string&) { o.delimiter_given = true; });
  app.add_flag("--no-validate", o.no_validate, "Find the key without validating each line")
      ->group("Input");
  app.add_option("--max-line-size", o.max_line_size, "Longest line accepted")
      ->group("Input")
      ->type_name("SIZE")
      ->capture_default_str();
  app.add_option("--chunk-size", o.chunk_size)->group("");
}

void add_key_options(CLI::App& app, SplitOptions& o) {
  app.add_option("-k,--key", o.keys,
                 "Key path (a.b or /a/b), or field number;\nrepeat for a composite key")
      ->group("Keys")
      ->type_name("PATH")
      ->allow_extra_args(false);  // -k takes one path; what follows is an input
  app.add_option("--missing-key", o.missing_key,
                 "Keyless events: bad (a bad line), or\npartition:P (send to partition P)")
      ->group("Keys")
      ->type_name("POLICY")
      ->capture_default_str();
}

void add_salt_options(CLI::App& app, SplitOptions& o) {
  app.add_option("--salt", o.salts, "Spread KEY over K sub-keys (repeatable)")
      ->group("Hot keys")
      ->type_name("KEY:K")
      ->allow_extra_args(false);
  app.add_option("--salt-by", o.salt_by,
                 "Pick the sub-key by a hash of this field\n(default: round-robin in input order)")
      ->group("Hot keys")
      ->type_name("PATH")
      ->check(not_empty("names no field: give a key path, e.g. --salt-by session_id"));
  app.add_option("--hot-keys", o.hot_keys,
                 "Salt any key whose share of events passes\nSHARE (default 2%)")
      ->group("Hot keys")
      ->type_name("auto[:SHARE]")
      ->check(not_empty("is empty: give auto, or auto:SHARE such as auto:5%"));
}

void add_partitioning_options(CLI::App& app, SplitOptions& o, bool with_partitions) {
  const std::vector<std::string> hashes(hash_spellings().begin(), hash_spellings().end());
  if (with_partitions) {
    app.add_option("-n,--partitions", o.partitions, "Number of partitions")
        ->group("Partitioning")
        ->type_name("N")
        ->required()
        ->transform(decimal_in(1u, kMaxPartitions));
    app.add_option("--hash", o.hash,
                   "murmur2 (alias kafka), crc32 (alias\nconsistent), fnv1a, md5, xxh3 or jump")
        ->group("Partitioning")
        ->type_name("NAME")
        ->check(choice(hashes))
        ->capture_default_str();
  }
  app.add_option("-j,--threads", o.threads, "Worker threads (default: all cores)")
      ->group("Partitioning")
      ->type_name("N")
      ->transform(decimal_in(1u, kMaxThreads));
}

void add_progress_options(CLI::App& app, bool& show, bool& hide) {
  app.add_flag("--progress", show, "Show the progress line even when stderr is\n"
                                       "not a terminal")
          ->group("Reporting");
  // (Given together, they are refused: kProgressConflict. CLI11's excludes() would print
  // "Excludes:" in the help's option column.)
  app.add_flag("--no-progress", hide, "Never show the progress line")->group("Reporting");
}

void add_progress_options(CLI::App& app, SplitOptions& o) {
  add_progress_options(app, o.progress, o.no_progress);
}

}  // namespace keyshard
