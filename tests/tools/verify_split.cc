// Checks a split output directory against its input, line by line: every event sits in the
// partition its key hashes to, in input order, none lost and none duplicated. The key is cut from
// the text with a plain string search (independent of keyshard's JSON code); the partitioners
// are pinned separately against external reference values.
//
// usage: verify_split --hash NAME -n N [--field NAME] INPUT DIR
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "hash/partitioner.h"

int main(int argc, char** argv) {
  std::string hash_text = "murmur2", field = "user_id";
  uint32_t partitions = 0;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--hash" && i + 1 < argc) hash_text = argv[++i];
    else if (arg == "-n" && i + 1 < argc) partitions = static_cast<uint32_t>(std::stoul(argv[++i]));
    else if (arg == "--field" && i + 1 < argc) field = argv[++i];
    else positional.push_back(arg);
  }
  const auto hash = keyshard::parse_hash_name(hash_text);
  if (!hash || partitions == 0 || positional.size() != 2) {
    std::cerr << "usage: verify_split --hash NAME -n N [--field NAME] INPUT DIR\n";
    return 2;
  }
  const keyshard::Partitioner partitioner(*hash, partitions);
  std::ifstream input(positional[0], std::ios::binary);
  if (!input) {
    std::cerr << "cannot open " << positional[0] << "\n";
    return 2;
  }
  std::vector<std::unique_ptr<std::ifstream>> outputs;
  for (uint32_t p = 0; p < partitions; ++p) {
    char name[32];
    std::snprintf(name, sizeof name, "/part-%05u.ndjson", p);
    outputs.push_back(std::make_unique<std::ifstream>(positional[1] + name, std::ios::binary));
    if (!*outputs.back()) {
      std::cerr << "missing output " << positional[1] << name << "\n";
      return 1;
    }
  }
  const std::string needle = "\"" + field + "\":\"";
  std::string line, got;
  uint64_t number = 0, keyless = 0;
  while (std::getline(input, line)) {
    ++number;
    const size_t at = line.find(needle);
    if (at == std::string::npos) {
      ++keyless;
      continue;
    }
    const size_t start = at + needle.size();
    const std::string key = line.substr(start, line.find('"', start) - start);
    const uint32_t p = partitioner.partition_of(key);
    if (!std::getline(*outputs[p], got)) {
      std::cerr << "input line " << number << " (key " << key << ") missing from partition " << p
                << "\n";
      return 1;
    }
    if (got != line) {
      std::cerr << "partition " << p << " out of order or wrong at input line " << number
                << ":\n  expected: " << line.substr(0, 120) << "\n  found:    "
                << got.substr(0, 120) << "\n";
      return 1;
    }
  }
  for (uint32_t p = 0; p < partitions; ++p) {
    if (std::getline(*outputs[p], got)) {
      std::cerr << "partition " << p << " has extra lines, first: " << got.substr(0, 120) << "\n";
      return 1;
    }
  }
  std::cout << "verified " << number << " lines (" << keyless << " without the key) over "
            << partitions << " partitions\n";
  return 0;
}
