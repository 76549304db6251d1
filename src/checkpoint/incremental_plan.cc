#include "checkpoint/incremental_plan.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <memory>

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
  // A run that stopped half-way may have been finishing a rotated file, which is not among the
  // paths given: finish it first, if it is still the same file.
  if (!previous.complete) {
    for (size_t i = previous.current; i < previous.inputs.size(); ++i) {
      const InputPosition& position = previous.inputs[i];
      if (std::find(paths.begin(), paths.end(), position.path) == paths.end() &&
          holds_position(position.path, position)) {
        plan.push_back(InputStart{position, false});
      }
    }
  }
  for (const std::string& path : paths) {
    const InputPosition* recorded = nullptr;
    for (const InputPosition& position : previous.inputs) {
      if (position.path == path) recorded = &position;
    }
    InputStart fresh{InputPosition{path}, true};
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) {
      // Between a rotation's rename and the new file, say. Its position is kept for the next
      // run, which finds it again.
      warn(path + ": not found; skipped this time");
      if (recorded != nullptr) {
        InputStart kept{*recorded, true};
        kept.finished = true;
        plan.push_back(std::move(kept));
      }
      continue;
    }
    if (recorded == nullptr) {
      plan.push_back(fresh);
      continue;
    }
    const bool same_file = static_cast<uint64_t>(info.st_dev) == recorded->device &&
                           static_cast<uint64_t>(info.st_ino) == recorded->inode;
    if (same_file || recorded->device == 0) {
      plan.push_back(InputStart{*recorded, true});
      continue;
    }
    // Rotated: finish the old file first, if it can be found and is still the same file.
    const std::string old_path =
        find_inode(directory_of(path), recorded->device, recorded->inode);
    if (!old_path.empty() && holds_position(old_path, *recorded)) {
      InputPosition old = *recorded;
      old.path = old_path;
      plan.push_back(InputStart{old, false});
    } else if (recorded->offset > 0) {
      warn(path + ": is a new file since the last run, and the file it replaced is not in the "
                  "same directory any more; lines appended to that file after the last run "
                  "(if any) are not read");
    }
    plan.push_back(fresh);
  }
  return plan;
}

}  // namespace keyshard
