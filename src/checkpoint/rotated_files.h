// Finding a log file again after a rotation moved it: by device and inode among the regular files
// of its directory, and the files beside it named like its rotations ("app.log.1",
// "app.log-20261201"). Each directory is read once per plan, however many files are looked for
// in it. Also the file clock that --incremental compares file times with.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "util/files.h"

namespace keyshard {

/// A file's modification time, in nanoseconds since the epoch.
int64_t modified_ns(const struct stat& info);

/// Now, on the clock that file times are taken from (never ahead of a later file time), in
/// nanoseconds since the epoch.
int64_t file_clock_ns();

/// The regular files of the directories looked in, each directory read once.
class DirectoryFiles {
 public:
  /// A file in `dir` with this device and inode (the rotated file, under its new name); "" if
  /// there is none.
  std::string find(const std::string& dir, uint64_t device, uint64_t inode);

  /// The files beside `path` named like its rotations that changed at or after `since` (ns)
  /// and that `known` (given each one's identity and path) does not know, oldest change first.
  std::vector<std::string> unread_rotations(
      const std::string& path, int64_t since,
      const std::function<bool(const FileIdentity&, const std::string&)>& known);

 private:
  struct File {
    std::string name;
    FileIdentity identity;
    int64_t modified;
  };
  struct Listing {
    std::vector<File> files;                           // by name
    std::map<FileIdentity, const File*> by_identity;  // (of hard links, the first by name)
  };

  const Listing& list(const std::string& dir);

  std::map<std::string, Listing> listings_;
};

}  // namespace keyshard
