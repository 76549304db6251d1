#include "checkpoint/checkpoint_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "checkpoint/checkpoint_codec.h"
#include "pipeline/run_config.h"
#include "util/durable_files.h"
#include "util/interrupt.h"

namespace keyshard {
namespace {

std::string state_dir(const std::string& dir) { return dir + "/" + kStateDirName; }

// Whether `pid` names a process that runs: one that exists and has not ended. A process that
// ended stays a zombie until its parent waits for it, which an init process that does not
// reap (in some containers) never does; /proc tells those apart ('Z', or 'X' while it goes).
bool process_runs(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  FileDescriptor status_file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  char text[512] = {};
  const ssize_t got =
      status_file.valid() ? ::read(status_file.get(), text, sizeof text - 1) : -1;
  if (got <= 0) return true;  // (no /proc: as kill() says)
  // "pid (name) state ...": the name may hold anything, so the state follows its last ')'.
  const std::string_view fields(text, static_cast<size_t>(got));
  const size_t name_end = fields.rfind(')');
  if (name_end == std::string_view::npos || name_end + 2 >= fields.size()) return true;
  const char state = fields[name_end + 2];
  return state != 'Z' && state != 'X';
}

Status make_state_dir(const std::string& dir, bool* created = nullptr) {
  const std::string path = state_dir(dir);
  if (::mkdir(path.c_str(), 0777) == 0) {
    if (created) *created = true;
  } else if (errno != EEXIST) {
    return Status::error("cannot create: " + errno_text(errno), path);
  } else if (struct stat info {}; ::lstat(path.c_str(), &info) == 0 && !S_ISDIR(info.st_mode)) {
    // The checkpoints and the lock stay in DIR: never written through a link to elsewhere.
    return Status::error(S_ISLNK(info.st_mode)
                             ? "is a symbolic link, which keyshard's state directory never is: "
                               "remove it"
                             : "is not a directory, where keyshard keeps its checkpoints and "
                               "lock: remove it, or choose another DIR",
                         path);
  }
  return {};
}

// Where DIR's lock file is.
std::string lock_path_of(const std::string& dir) { return state_dir(dir) + "/" + kLockFileName; }

// The lock file this process holds (its path and identity), once RunLock::acquire() has it:
// set before the run's threads start, read by each checkpoint write.
struct HeldLock {
  std::string path;
  FileIdentity identity;
};
std::optional<HeldLock> held_lock;

// A lock file removed (by hand, as a "stale" one) or replaced while this run holds it keeps no
// other run out: one may be writing DIR too. No checkpoint then vouches for the outputs.
Status check_lock_in_place(const std::string& dir) {
  if (!held_lock || held_lock->path != lock_path_of(dir)) return {};
  if (identity_of(held_lock->path) == held_lock->identity) return {};
  return Status::error("was removed or replaced while this run held it, so another run may be "
                       "writing here too: this run stops, with no checkpoint past that; once "
                       "no other run writes here, `keyshard verify` tells whether the outputs "
                       "hold, and a run started over with --force rewrites them",
                       held_lock->path)
      .because(Cause::kLockLost);
}

}  // namespace

std::string checkpoint_path(const std::string& dir) {
  return state_dir(dir) + "/" + kCheckpointFileName;
}

bool has_checkpoint(const std::string& dir) {
  struct stat info {};
  return ::stat(checkpoint_path(dir).c_str(), &info) == 0;
}

Status write_checkpoint(const std::string& dir, const Checkpoint& checkpoint) {
  if (Status status = check_lock_in_place(dir); !status) return status;
  if (Status status = make_state_dir(dir); !status) return status;
  const std::string path = checkpoint_path(dir);
  const std::string temporary = path + ".tmp";
  const auto failed = [&temporary](Status status) {
    (void)::unlink(temporary.c_str());  // the checkpoint in place stays the last one
    return status;
  };
  (void)::unlink(temporary.c_str());  // a leftover, or a link that must not be written through
  FileDescriptor fd(
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666));
  if (!fd.valid()) return Status::error("cannot create: " + errno_text(errno), temporary);
  if (Status status = write_all(fd.get(), encode_checkpoint(checkpoint), temporary); !status) {
    return failed(status);
  }
  if (::fsync(fd.get()) != 0) {
    return failed(Status::error("fsync failed: " + errno_text(errno), temporary));
  }
  if (Status status = fd.close(temporary); !status) return failed(status);
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    return failed(Status::error("cannot rename into place: " + errno_text(errno), path));
  }
  return sync_directory(state_dir(dir));
}

bool run_is_writing(const std::string& dir) {
  // (A shared lock is refused while a run holds the exclusive one; taken, it is let go at once.)
  const std::string lock_path = lock_path_of(dir);
  FileDescriptor lock(::open(lock_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  return lock.valid() && ::flock(lock.get(), LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
}

Status load_checkpoint(const std::string& dir, Checkpoint& checkpoint) {
  const std::string path = checkpoint_path(dir);
  // (Without blocking: a FIFO put in its place must not hold the run.)
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT) {
      struct stat info {};
      if (::stat(state_dir(dir).c_str(), &info) == 0) {
        // A run that is still starting holds the lock.
        if (run_is_writing(dir)) {
          return Status::error("another keyshard run is writing here and has not written its "
                               "first checkpoint yet; this run leaves it alone",
                               dir, kExitLocked);
        }
        return Status::error("no checkpoint here: the run that wrote this directory stopped "
                             "before its first checkpoint (or its checkpoint was removed), so "
                             "it cannot be resumed; start it again (with --force if files "
                             "there hold events)",
                             dir, kExitUsage);
      }
      return Status::error("no checkpoint here: not a directory written by `keyshard split -o`",
                           dir, kExitUsage);
    }
    if (errno == ENOTDIR) {
      struct stat info {};
      if (::stat(dir.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
        return Status::error("is not a directory, where keyshard keeps its checkpoint: move it "
                             "away",
                             state_dir(dir), kExitUsage);
      }
      return Status::error("not a directory: name the output directory (-o DIR) of a split", dir,
                           kExitUsage);
    }
    return Status::error("cannot open: " + errno_text(errno), path);
  }
  if (struct stat info {}; ::fstat(fd.get(), &info) == 0 && !S_ISREG(info.st_mode)) {
    // (--force removes any other file there, but not a directory.)
    return Status::error(S_ISDIR(info.st_mode)
                             ? "is a directory, where the checkpoint file belongs: move it away"
                             : "is not a regular file, as a checkpoint is: move it away, or "
                               "start over with --force",
                         path);
  }
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const long got = read_some(fd.get(), buffer, sizeof buffer);
    if (got < 0) return Status::error("read failed: " + errno_text(errno), path);
    if (got == 0) break;
    text.append(buffer, static_cast<size_t>(got));
    if (text.size() > (1u << 30)) return Status::error("damaged checkpoint (too large)", path);
  }
  return decode_checkpoint(text, path, checkpoint);
}

Status remove_checkpoint(const std::string& dir) {
  const std::string path = checkpoint_path(dir);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    if (errno == EISDIR) {
      return Status::error("is a directory, where the checkpoint file belongs: move it away",
                           path);
    }
    return Status::error("cannot remove: " + errno_text(errno), path);
  }
  return {};
}

Status RunLock::acquire(const std::string& dir, bool inherited) {
  dir_ = dir;
  const std::string path = lock_path_of(dir);
  // A run refused before it starts removes the lock file it made (remove_if_created): a lock
  // taken meanwhile on that file, unlinked, keeps no one out, so it is taken again on the file
  // now at the path.
  for (int attempt = 0;; ++attempt) {
    created_state_dir_ = false;
    if (Status status = make_state_dir(dir, &created_state_dir_); !status) return status;
    if (Status status = take(path, dir); !status) return status;
    struct stat held {}, named {};
    if (::fstat(fd_.get(), &held) == 0 && ::stat(path.c_str(), &named) == 0 &&
        held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
      break;
    }
    fd_ = FileDescriptor();
    if (attempt == 100) return Status::error("cannot lock: the lock file keeps going", path);
  }
  inherited_ = inherited;
  if (inherited && ::fcntl(fd_.get(), F_SETFD, 0) != 0) {
    return Status::error("cannot share the lock: " + errno_text(errno), path);
  }
  if (const auto identity = identity_of(path)) held_lock = HeldLock{path, *identity};
  // Written over the last holder's pid, then cut to length: the file is never seen empty.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::pwrite(fd_.get(), pid.data(), pid.size(), 0) < 0 ||
      ::ftruncate(fd_.get(), static_cast<off_t>(pid.size())) != 0) {
    return Status::error("cannot write: " + errno_text(errno), path);
  }
  held_ = true;
  return {};
}

Status RunLock::take(const std::string& path, const std::string& dir) {
  fd_ = FileDescriptor(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666));
  if (!fd_.valid() && errno == ELOOP) {
    return Status::error("is a symbolic link, which keyshard's lock never is: remove it", path);
  }
  if (!fd_.valid()) return Status::error("cannot open: " + errno_text(errno), path);
  if (::flock(fd_.get(), LOCK_EX | LOCK_NB) != 0) {
    const int error_number = errno;
    if (error_number != EWOULDBLOCK) {
      return Status::error("cannot lock: " + errno_text(error_number), path);
    }
    // The holder writes its pid just after it takes the lock, over the last holder's: a pid
    // that is missing or gone is looked at again for a moment before it counts.
    std::string holder;
    long holder_pid = 0;
    bool live = false;    // the holder's pid names a running process
    bool locked = false;  // the holder ended meanwhile: the lock is this run's
    for (int attempt = 0; attempt < 200; ++attempt) {
      if (attempt > 0) ::usleep(5000);
      char pid[32] = {};
      const ssize_t got = ::pread(fd_.get(), pid, sizeof pid - 1, 0);
      holder.assign(pid, got > 0 ? static_cast<size_t>(got) : 0);
      holder.resize(std::min(holder.size(), holder.find_first_of("\n ")));
      holder_pid = holder.empty() ? 0 : std::strtol(holder.c_str(), nullptr, 10);
      live = holder_pid > 0 && process_runs(static_cast<pid_t>(holder_pid));
      if (live) break;
      if (::flock(fd_.get(), LOCK_EX | LOCK_NB) == 0) {
        locked = true;  // its holder has just ended
        break;
      }
      if (holder_pid > 0 && attempt >= 20) break;  // gone for 100 ms: its children hold it
    }
    if (!locked) {
      if (live || holder_pid <= 0) {
        return Status::error("another keyshard run (pid " +
                                 (holder.empty() ? "unknown" : holder) +
                                 ") is writing here; this run leaves it alone",
                             dir, kExitLocked);
      }
      // The run is gone but its --exec children still hold the lock: let them finish.
      std::fprintf(stderr,
                   "keyshard: %s: waiting for the --exec children of an earlier run (pid %ld) "
                   "to finish writing\n",
                   visible_controls(dir).c_str(), holder_pid);
      while (::flock(fd_.get(), LOCK_EX) != 0) {
        if (errno != EINTR) return Status::error("cannot lock: " + errno_text(errno), path);
        if (const int signal_number = interrupt_signal(); signal_number != 0) {
          return Status::error("interrupted while waiting for them; nothing was read or written",
                               dir, kExitInterrupted + signal_number);
        }
      }
    }
  }
  return {};
}

void RunLock::remove_if_created(bool children_started) {
  // Only a lock this object holds, and not one that --exec children (or what they left
  // running) may hold too. Unlinked while still held: a run that opened the file meanwhile
  // finds it gone once it has the lock, and starts again (see acquire()).
  if (!held_ || (inherited_ && children_started) || !created_state_dir_) return;
  held_lock.reset();
  (void)::unlink(lock_path_of(dir_).c_str());
  (void)::rmdir(state_dir(dir_).c_str());  // only if nothing else is in it
  fd_ = FileDescriptor();
  held_ = false;
}

}  // namespace keyshard
