// A fresh directory under /tmp for a unit test, removed with everything in it at the end.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

namespace keyshard {

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/keyshard-unit-XXXXXX";
    const char* made = ::mkdtemp(pattern);
    REQUIRE(made != nullptr);
    path_ = made;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  /// Writes `bytes` to the file `name` in this directory and returns its path.
  std::string write(std::string_view name, std::string_view bytes) const {
    const std::string path = path_ + "/" + std::string(name);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    REQUIRE(out.good());
    return path;
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace keyshard
