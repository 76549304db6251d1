// Where checkpoints live (DIR/.keyshard/checkpoint.json), how they reach the disk (temporary
// file, fsync, rename, fsync of the directory: a reader sees the old checkpoint or the new one,
// never half of one, even after a power cut), and the lock that keeps two runs out of one DIR.
#pragma once

#include <string>

#include "checkpoint/checkpoint.h"
#include "util/files.h"
#include "util/status.h"

namespace keyshard {

std::string checkpoint_path(const std::string& dir);

/// True when DIR holds a checkpoint file (damaged or not).
bool has_checkpoint(const std::string& dir);

/// Writes `checkpoint` durably and atomically.
Status write_checkpoint(const std::string& dir, const Checkpoint& checkpoint);

/// Reads and checks DIR's checkpoint; refuses a missing, damaged or foreign one with a reason.
Status load_checkpoint(const std::string& dir, Checkpoint& checkpoint);

/// Whether a run (or the --exec children of one) holds DIR's lock: it is writing there.
bool run_is_writing(const std::string& dir);

/// Removes DIR's checkpoint (split --force starts over).
Status remove_checkpoint(const std::string& dir);

/// An exclusive lock on DIR/.keyshard/lock, held for the life of the object. A second run that
/// tries to take it fails with exit status 75, naming the holder's pid. With `inherited`, --exec
/// children hold it too: when keyshard dies, the next run waits until the children it left
/// have finished writing their outputs (it says so) instead of writing beside them.
class RunLock {
 public:
  Status acquire(const std::string& dir, bool inherited = false);
  /// Lets go of the lock and, when acquire() made DIR/.keyshard for it, removes the lock file
  /// and that directory: a run refused before it started leaves no trace. Once --exec
  /// children were started (they share the lock), the lock stays.
  void remove_if_created(bool children_started);

 private:
  // Opens and locks `path`, waiting for the --exec children of a run that is gone.
  Status take(const std::string& path, const std::string& dir);

  FileDescriptor fd_;
  std::string dir_;
  bool created_state_dir_ = false;
  bool held_ = false;       // acquire() succeeded
  bool inherited_ = false;  // --exec children share the lock
};

}  // namespace keyshard
