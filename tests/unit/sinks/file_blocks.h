// Test data for the file sinks' tests: blocks of lines that tell their file and block apart, and
// a file's bytes read back.
#pragma once

#include <fstream>
#include <iterator>
#include <string>

namespace keyshard {

/// The bytes file `file` gets in block `block`: distinct per file and block, lines included.
inline std::string block_bytes(int file, int block, size_t size) {
  std::string line = "{\"file\":";
  line.append(std::to_string(file)).append(",\"block\":").append(std::to_string(block));
  line.append("}\n");
  std::string bytes;
  while (bytes.size() < size) bytes.append(line);
  bytes.resize(size);
  return bytes;
}

/// Everything the file at `path` holds.
inline std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace keyshard
