#include "checkpoint/incremental_plan.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <map>
#include <utility>

#include "input/input_source.h"

namespace keyshard {
namespace {

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// A file in `dir` with this device and inode (the rotated file, under its new name).
std::string find_inode(const std::string& dir, uint64_t device, uint64_t inode) {
  std::unique_ptr<DIR, int (*)(DIR*)> listing(::opendir(dir.c_str()), ::closedir);
  if (!listing) return {};
  while (const dirent* entry = ::readdir(listing.get())) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = dir == "." ? name : dir == "/" ? "/" + name : dir + "/" + name;
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        static_cast<uint64_t>(info.st_dev) == device &&
        static_cast<uint64_t>(info.st_ino) == inode) {
      return path;
    }
  }
  return {};
}

using FileIdentity = std::pair<uint64_t, uint64_t>;  // device, inode

std::optional<FileIdentity> identity_of(const std::string& path) {
  struct stat info {};
  if (path == "-" || ::stat(path.c_str(), &info) != 0) return std::nullopt;
  return FileIdentity{static_cast<uint64_t>(info.st_dev), static_cast<uint64_t>(info.st_ino)};
}

}  // namespace

bool holds_position(const std::string& path, const InputPosition& position) {
  std::unique_ptr<InputSource> source;
  if (!open_input(path, source) || source->compressed()) return false;
  std::string head, tail;
  if (!source->seek(position.offset, head, tail)) return false;
  FingerprintWindow window;
  window.assign(std::move(head), std::move(tail));
  return window.head_hash() == position.head_hash && window.tail_hash() == position.tail_hash;
}

std::vector<InputStart> plan_incremental(const Checkpoint& previous,
                                         const std::vector<std::string>& paths,
                                         const std::function<void(const std::string&)>& warn) {
  std::vector<InputStart> plan;
  // A file is read once, whatever names it goes by ("app.log", "./app.log", a rotated name);
  // a recorded position is taken up once.
  std::map<FileIdentity, std::string> claimed;  // -> the name it is read under
  std::vector<bool> taken(previous.inputs.size(), false);
  auto claim = [&](const InputPosition& position) {
    if (position.device != 0) claimed.emplace(FileIdentity{position.device, position.inode}, position.path);
  };

  // A run that stopped half-way may have been finishing a rotated file, which is not among the
  // paths given: finish it first, if it is still the same file.
  if (!previous.complete) {
    for (size_t i = previous.current; i < previous.inputs.size(); ++i) {
      const InputPosition& position = previous.inputs[i];
      if (std::find(paths.begin(), paths.end(), position.path) == paths.end() &&
          holds_position(position.path, position)) {
        plan.push_back(InputStart{position, false});
        taken[i] = true;
        claim(position);
      }
    }
  }
  for (const std::string& path : paths) {
    const auto identity = identity_of(path);
    if (const auto read = identity ? claimed.find(*identity) : claimed.end(); read != claimed.end()) {
      if (read->second != path) warn(path + ": the same file as " + read->second + "; read once");
      continue;
    }
    // The position recorded under this name; else under another name of the same file.
    std::optional<size_t> recorded;
    for (size_t i = 0; i < previous.inputs.size(); ++i) {
      if (!taken[i] && previous.inputs[i].path == path) recorded = i;
    }
    if (!recorded && identity) {
      for (size_t i = 0; i < previous.inputs.size(); ++i) {
        const InputPosition& position = previous.inputs[i];
        if (!taken[i] && position.device != 0 &&
            FileIdentity{position.device, position.inode} == *identity) {
          recorded = i;
        }
      }
    }
    if (recorded) taken[*recorded] = true;
    InputStart fresh{InputPosition{path}, true};
    if (!identity) {
      // Between a rotation's rename and the new file, say. Its position is kept for the next
      // run, which finds it again.
      warn(path + ": not found; skipped this time");
      if (recorded) {
        InputStart kept{previous.inputs[*recorded], true};
        kept.finished = true;
        plan.push_back(std::move(kept));
      }
      continue;
    }
    if (!recorded) {
      plan.push_back(fresh);
      claimed.emplace(*identity, path);
      continue;
    }
    const InputPosition& position = previous.inputs[*recorded];
    const bool same_file = FileIdentity{position.device, position.inode} == *identity;
    if (same_file || position.device == 0) {
      InputStart continued{position, true};
      continued.position.path = path;  // as named this time
      plan.push_back(std::move(continued));
      claimed.emplace(*identity, path);
      continue;
    }
    // Rotated: finish the old file first, if it can be found, is still the same file and is
    // not read under a name of its own already.
    const std::string old_path = find_inode(directory_of(path), position.device, position.inode);
    if (claimed.contains({position.device, position.inode})) {
      // read already in this run
    } else if (!old_path.empty() && holds_position(old_path, position)) {
      InputPosition old = position;
      old.path = old_path;
      plan.push_back(InputStart{old, false});
      claim(old);
    } else if (position.offset > 0) {
      warn(path + ": is a new file since the last run, and the file it replaced is not in the "
                  "same directory any more; lines appended to that file after the last run "
                  "(if any) are not read");
    }
    plan.push_back(fresh);
    claimed.emplace(*identity, path);
  }

  // The files of earlier runs not named this time keep their positions, for a later run that
  // names them again; only while their name still leads to the same file.
  std::vector<InputStart> carried;
  for (size_t i = 0; i < previous.inputs.size(); ++i) {
    const InputPosition& position = previous.inputs[i];
    if (taken[i] || position.path == "-" || position.device == 0) continue;
    const FileIdentity recorded{position.device, position.inode};
    if (claimed.contains(recorded) || identity_of(position.path) != recorded) continue;
    if (std::any_of(plan.begin(), plan.end(), [&](const InputStart& start) {
          return start.position.path == position.path;
        })) {
      continue;
    }
    InputStart kept{position, true};
    kept.finished = true;
    kept.carried = true;
    claimed.emplace(recorded, position.path);
    carried.push_back(std::move(kept));
  }
  plan.insert(plan.begin(), carried.begin(), carried.end());
  return plan;
}

}  // namespace keyshard
