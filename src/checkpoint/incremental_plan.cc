#include "checkpoint/incremental_plan.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <optional>
#include <map>
#include <set>
#include <utility>

#include "checkpoint/rotated_files.h"
#include "input/input_source.h"
#include "util/number_text.h"

namespace keyshard {
namespace {

// (Standard input is refused with --incremental before a run is planned.)
std::optional<FileIdentity> file_identity(const std::string& path) {
  return path == "-" ? std::nullopt : identity_of(path);
}

// A file to read from its start. Its identity is recorded from now on, so that a run stopped
// before it opened the file still knows which file it was (and finds it again once rotated).
InputStart unread(const std::string& path, const std::optional<FileIdentity>& identity) {
  InputStart start{InputPosition{path}, true};
  if (identity) {
    start.position.device = identity->first;
    start.position.inode = identity->second;
    const FingerprintWindow nothing_read;
    start.position.head_hash = nothing_read.head_hash();
    start.position.tail_hash = nothing_read.tail_hash();
  }
  return start;
}

}  // namespace

void renumber_decision_inputs(const Checkpoint& previous, const std::vector<InputStart>& plan,
                              std::vector<HotKeyDecision>& decisions) {
  for (HotKeyDecision& decision : decisions) {
    if (decision.input >= previous.inputs.size()) continue;
    const InputPosition& was = previous.inputs[decision.input];
    decision.input = kEarlierInput;
    for (size_t i = 0; i < plan.size(); ++i) {
      // The plan carries a recorded position over as it was (a new file that got a deleted
      // one's inode starts afresh, at 0, without fingerprints).
      const InputPosition& now = plan[i].position;
      if (now.device == was.device && now.inode == was.inode && now.offset == was.offset &&
          now.head_hash == was.head_hash && now.tail_hash == was.tail_hash &&
          (was.device != 0 || now.path == was.path)) {
        decision.input = static_cast<uint32_t>(i);
        break;
      }
    }
  }
}

std::vector<InputStart> plan_first_incremental(
    const std::vector<std::string>& paths, const std::function<void(const std::string&)>& warn) {
  std::vector<InputStart> plan;
  std::map<FileIdentity, std::string> read;  // -> the name it is read under
  std::set<std::string> seen, warned;
  for (const std::string& path : paths) {
    if (!seen.insert(path).second) {
      if (file_identity(path) && warned.insert(path).second) {  // (said once a name)
        warn(path + ": named twice; read once");
      }
      continue;
    }
    const auto identity = file_identity(path);
    if (!identity && errno == ENOENT) {
      // As at any later run: a log that does not exist yet is read once it does.
      warn(path + ": not found; skipped this time");
      continue;
    }
    if (identity) {
      const auto [first, added] = read.emplace(*identity, path);
      if (!added) {
        if (first->second != path) {
          warn(path + ": the same file as " + first->second + "; read once");
        }
        continue;
      }
    }
    plan.push_back(unread(path, identity));
  }
  return plan;
}

bool holds_position(const std::string& path, const InputPosition& position) {
  std::unique_ptr<InputSource> source;
  if (!open_input(path, source)) return false;
  FingerprintWindow window;
  bool reached = false;
  if (!skip_to(*source, position.offset, window, reached) || !reached) return false;
  return window.head_hash() == position.head_hash && window.tail_hash() == position.tail_hash;
}

std::vector<InputStart> plan_incremental(const Checkpoint& previous,
                                         const std::vector<std::string>& paths,
                                         const std::function<void(const std::string&)>& warn,
                                         int64_t previous_seen) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path here = fs::current_path(error);
  // A recorded relative path is from the directory the last run worked in.
  std::vector<InputPosition> recorded = previous.inputs;
  if (!previous.working_directory.empty() && !error && here != previous.working_directory) {
    for (InputPosition& position : recorded) {
      if (position.path != "-" && !position.path.empty() && position.path.front() != '/') {
        position.path = (fs::path(previous.working_directory) / position.path).lexically_normal();
      }
    }
  }
  // Names compare as absolute, normalised paths ("./a.log" is "a.log").
  auto name_of = [&here, here_known = !error](const std::string& path) {
    if (path == "-") return path;
    const fs::path absolute = path.starts_with('/') || !here_known ? fs::path(path) : here / path;
    return absolute.lexically_normal().string();
  };
  std::set<FileIdentity> named;
  std::set<std::string> named_names;
  for (const std::string& path : paths) {
    if (const auto identity = file_identity(path)) named.insert(*identity);
    named_names.insert(name_of(path));
  }
  auto identity_recorded = [](const InputPosition& position) {
    return FileIdentity{position.device, position.inode};
  };
  // The recorded positions by file and by name, each list in recorded order.
  std::vector<std::string> recorded_names;
  std::map<FileIdentity, std::vector<size_t>> recorded_by_file;
  std::map<std::string, std::vector<size_t>> recorded_by_name;
  for (size_t i = 0; i < recorded.size(); ++i) {
    recorded_names.push_back(name_of(recorded[i].path));
    recorded_by_name[recorded_names[i]].push_back(i);
    if (recorded[i].device != 0) recorded_by_file[identity_recorded(recorded[i])].push_back(i);
  }
  DirectoryFiles directories;
  std::vector<InputStart> plan;
  std::map<FileIdentity, std::string> claimed;  // read in this run -> the name it is read under
  // Whether the file at `at` is one this run reads or one an earlier run read. A recorded
  // identity counts only while the file holds the bytes recorded for it: once that file is
  // deleted, the file system may give its inode to a new file (logrotate's `rotate N` deletes
  // the oldest rotation just before the new log is created), which no run has read. A record
  // at offset 0 has no bytes to tell its file by: it vouches only for a file still empty.
  std::map<FileIdentity, bool> vouched;  // (each file's bytes are compared once)
  auto known = [&](const FileIdentity& file, const std::string& at) {
    if (named.contains(file) || claimed.contains(file)) return true;
    const auto entry = recorded_by_file.find(file);
    if (entry == recorded_by_file.end()) return false;
    const auto [answer, first] = vouched.try_emplace(file, false);
    if (first) {
      struct stat info {};
      const bool empty = ::stat(at.c_str(), &info) == 0 && info.st_size == 0;
      answer->second = std::any_of(entry->second.begin(), entry->second.end(), [&](size_t i) {
        return (recorded[i].offset > 0 || empty) && holds_position(at, recorded[i]);
      });
    }
    return answer->second;
  };

  // A file is read once, whatever names it goes by ("app.log", "./app.log", a rotated name);
  // a recorded position is taken up once.
  std::vector<InputStart> front;  // positions only kept: before the inputs read
  std::vector<bool> taken(recorded.size(), false);
  auto claim = [&](const InputPosition& position) {
    if (position.device != 0) claimed.emplace(identity_recorded(position), position.path);
  };

  // A run that stopped half-way may have been finishing a rotated file, which is not among the
  // paths given: finish it first, if it is still the same file. (A file named this time, under
  // any name, is continued below instead.)
  if (!previous.complete) {
    for (size_t i = previous.current; i < recorded.size(); ++i) {
      const InputPosition& position = recorded[i];
      if (named_names.contains(recorded_names[i]) ||
          (position.device != 0 && named.contains(identity_recorded(position)))) {
        continue;
      }
      // Still under its name, or renamed again within its directory (the next rotation).
      InputPosition at = position;
      bool found = (position.device == 0 || file_identity(at.path) == identity_recorded(position)) &&
                   holds_position(at.path, at);
      if (!found && position.device != 0) {
        at.path = directories.find(directory_of(position.path), position.device, position.inode);
        if (at.path.empty()) {
          warn(position.path + ": the last run stopped while finishing this rotated file, which "
                               "is not in its directory any more; its lines after byte " +
               std::to_string(position.offset) + " (if any) are not read");
          continue;
        }
        found = !named_names.contains(name_of(at.path)) && holds_position(at.path, at);
      }
      if (found) {
        plan.push_back(InputStart{at, false});
        taken[i] = true;
        claim(at);
      }
    }
  }
  std::set<std::string> seen, warned;
  for (const std::string& path : paths) {
    if (!seen.insert(path).second) {
      if (file_identity(path) && warned.insert(path).second) {  // (said once a name)
        warn(path + ": named twice; read once");
      }
      continue;
    }
    const auto identity = file_identity(path);
    const auto read = identity ? claimed.find(*identity) : claimed.end();
    if (read != claimed.end()) {
      if (read->second != path) warn(path + ": the same file as " + read->second + "; read once");
      continue;
    }
    // The position of this very file (renamed or not); else the one recorded under this name.
    // (The last one recorded that is not taken up yet.)
    const auto last_untaken = [&taken](const auto& index, const auto& key) {
      std::optional<size_t> last;
      if (const auto entry = index.find(key); entry != index.end()) {
        for (const size_t i : entry->second) {
          if (!taken[i]) last = i;
        }
      }
      return last;
    };
    std::optional<size_t> found;
    if (identity) found = last_untaken(recorded_by_file, *identity);
    std::optional<size_t> by_name = last_untaken(recorded_by_name, name_of(path));
    // The file system may give a new file the inode of a deleted one (logrotate's `mv app.log
    // app.log.1` deletes the old app.log.1): a file whose bytes are not the ones recorded for
    // its inode is the new file at this name, rotated in after the one recorded under it. So is
    // a file recorded empty under that inode (no bytes to tell) while the file recorded under
    // this name is still in the directory under another name, as a rotation leaves it.
    if (found && by_name && *by_name != *found) {
      const InputPosition& by_inode = recorded[*found];
      const InputPosition& named_here = recorded[*by_name];
      if (!holds_position(path, by_inode) ||
          (by_inode.offset == 0 && named_here.device != 0 &&
           !directories.find(directory_of(path), named_here.device, named_here.inode).empty())) {
        found = by_name;
      }
    }
    if (!found) found = by_name;
    InputStart fresh = unread(path, identity);
    if (!identity) {
      // Between a rotation's rename and the new file, say. Its position is kept for the next
      // run, which finds it again; unless the file is named this time under another name.
      warn(path + ": not found; skipped this time");
      if (found && !named.contains(identity_recorded(recorded[*found]))) {
        taken[*found] = true;
        InputStart kept{recorded[*found], true};
        kept.finished = true;
        front.push_back(std::move(kept));
      }
      continue;
    }
    if (!found) {
      plan.push_back(fresh);
      claimed.emplace(*identity, path);
      continue;
    }
    taken[*found] = true;
    const InputPosition& position = recorded[*found];
    const bool same_file = identity_recorded(position) == *identity;
    if (same_file || position.device == 0) {
      InputStart continued{position, true};
      continued.position.path = path;  // as named this time
      plan.push_back(std::move(continued));
      claimed.emplace(*identity, path);
      continue;
    }
    // Rotated: finish the old file first (before the new one, which follows it in time), if it
    // can be found, is still the same file and is not read already.
    const std::string old_path = directories.find(directory_of(path), position.device, position.inode);
    const bool read_already = claimed.contains(identity_recorded(position));
    const bool old_found =
        read_already || (!old_path.empty() && holds_position(old_path, position));
    if (read_already) {
      // read already in this run
    } else if (old_found) {
      InputPosition old = position;
      old.path = old_path;
      plan.push_back(InputStart{old, false});
      claim(old);
    } else if (position.offset > 0 && holds_position(path, position)) {
      // Not a rotation: the file was written anew, beginning with the bytes the last run read
      // (a copy put in its place, as sed -i or an editor makes). Read on after them, so that
      // no line is read twice.
      warn(path + ": is another file since the last run (written anew, as by sed -i or an "
                  "editor), beginning with the " + with_commas(position.offset) +
           " bytes that run read: read on after them");
      InputStart continued{position, true};
      continued.position.path = path;
      continued.position.device = identity->first;
      continued.position.inode = identity->second;
      plan.push_back(std::move(continued));
      claimed.emplace(*identity, path);
      continue;
    } else if (position.offset > 0) {
      warn(path + ": is a new file since the last run, and the file it replaced is not in the "
                  "same directory any more; lines appended to that file after the last run "
                  "(if any) are not read");
    }
    plan.push_back(fresh);
    claimed.emplace(*identity, path);
    // (Only when the old file was found: one compressed away is also named like a rotation.)
    if (previous_seen != 0 && old_found) {
      for (const std::string& missed : directories.unread_rotations(path, previous_seen, known)) {
        warn(missed + ": changed since the last run and read by none; if " + path +
             " was rotated more than once since then, it holds lines of " + path +
             " that no run reads");
      }
    }
  }

  // The files of earlier runs not named this time keep their positions, for a later run that
  // names them again: while their name leads to the same file, or while the file, rotated away
  // under another name, is in the same directory (a later run names it, finds it rotated, and
  // finishes it). A file that is gone is forgotten.
  std::set<std::string> planned_names;
  for (const std::vector<InputStart>* starts : {&plan, &front}) {
    for (const InputStart& start : *starts) planned_names.insert(name_of(start.position.path));
  }
  for (size_t i = 0; i < recorded.size(); ++i) {
    const InputPosition& position = recorded[i];
    if (taken[i] || position.path == "-" || position.device == 0) continue;
    const FileIdentity file = identity_recorded(position);
    if (claimed.contains(file)) continue;
    if (file_identity(position.path) != file &&
        directories.find(directory_of(position.path), position.device, position.inode).empty()) {
      continue;
    }
    if (!planned_names.insert(recorded_names[i]).second) continue;
    InputStart kept{position, true};
    kept.finished = true;
    kept.carried = true;
    claimed.emplace(file, position.path);
    front.insert(front.begin(), std::move(kept));  // carried ones first (see carried_inputs)
  }
  plan.insert(plan.begin(), front.begin(), front.end());
  return plan;
}

}  // namespace keyshard
