#include "sinks/output_directory.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

#include <zstd.h>

#include "sinks/overlap_checks.h"
#include "util/durable_files.h"
#include "util/files.h"

namespace keyshard {

namespace fs = std::filesystem;

namespace {

constexpr uint64_t kSpareFiles = 32;  // inputs, dead letters, the summary, libraries

}  // namespace

Status check_open_file_limit(const RunConfig& config, bool resuming) {
  // With --exec, keyshard holds up to three pipes per child (its stdin, stdout and stderr).
  const uint64_t children =
      !config.exec() ? 0 : config.exec_per_worker ? config.threads : config.partitions;
  const uint64_t files = config.to_stdout || config.exec() ? 0 : config.partitions;
  // Descriptors open from the start beyond the standard streams (inherited from whatever
  // started keyshard) count against the limit too.
  const uint64_t open_already = open_files_at_start();
  const uint64_t inherited = open_already > 3 ? open_already - 3 : 0;
  const uint64_t needed = files + 3 * children + kSpareFiles + inherited;
  const uint64_t limit = raise_open_file_limit();
  // What sets the count (-j with a child per worker, else -n), and so what to lower.
  const bool by_workers = config.exec() && config.exec_per_worker;
  const std::string hint = resuming ? "; resume keeps the run's -n and --exec-per"
                           : by_workers ? " or use fewer workers (-j)"
                           : config.exec()
                               ? " or use --exec-per worker (one child per worker thread)"
                               : " or use fewer partitions";
  const std::string what = by_workers ? "-j " + std::to_string(config.threads) + " with "
                                            "--exec-per worker"
                                      : "-n " + std::to_string(config.partitions);
  if (needed > limit) {
    return Status::error(
        what + " needs about " + std::to_string(needed) + " open files" +
            (inherited > 0 ? " (" + std::to_string(inherited) +
                                 " of them open already, inherited from what started keyshard)"
                           : "") +
            ", but this process may open only " + std::to_string(limit) +
            " (the hard limit). Raise it (e.g. `ulimit -Hn` as root, or LimitNOFILE= for a "
            "service)" + hint + ".",
        {}, kExitUsage);
  }
  rlimit processes{};
  if (children > 0 && getrlimit(RLIMIT_NPROC, &processes) == 0 &&
      processes.rlim_cur != RLIM_INFINITY && children + kSpareFiles > processes.rlim_cur) {
    return Status::error("--exec would start " + std::to_string(children) +
                             " children, and needs room for about " +
                             std::to_string(kSpareFiles) + " processes more (the commands they " +
                             "run, keyshard's threads), but this user may run only " +
                             std::to_string(processes.rlim_cur) +
                             " processes and threads in all; raise `ulimit -u`" + hint + ".",
                         {}, kExitUsage);
  }
  return {};
}

std::string without_trailing_slashes(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

Status create_output_directory(const std::string& dir, std::vector<std::string>* created) {
  std::error_code error;
  if (fs::exists(dir, error)) {
    if (!fs::is_directory(dir, error)) return Status::error("not a directory", dir, kExitUsage);
    return {};
  }
  if (fs::is_symlink(fs::symlink_status(dir, error))) {
    // (create_directories would say only "File exists")
    const fs::path target = fs::read_symlink(dir, error);
    return Status::error("is a symbolic link to " + target.string() +
                             ", which does not exist: create that directory, or name another DIR",
                         dir, kExitUsage);
  }
  if (created) {
    // As given, not normalised: create_directories("a/../b") makes "a" too.
    fs::path missing = dir;
    while (missing.has_relative_path() && missing.filename().empty()) {
      missing = missing.parent_path();  // "a/b/" names "a/b"
    }
    for (; missing.has_relative_path() && !fs::exists(missing, error);
         missing = missing.parent_path()) {
      created->push_back(missing.string());
    }
  }
  // (No error but nothing created: another run made it in between; that run's lock decides.)
  if (!fs::create_directories(dir, error) && (error || !fs::is_directory(dir, error))) {
    // (Under a regular file, say: DIR names no directory that can be, as for a file at DIR.)
    const bool not_a_directory = error == std::errc::not_a_directory;
    return Status::error("cannot create the output directory: " +
                             (error ? error.message() : std::string("it is not a directory")),
                         dir, not_a_directory ? kExitUsage : kExitFailure);
  }
  return {};
}

// Whether the file holds no event: empty, or (a compressed output) an empty zstd frame. A
// symbolic link is never taken for such a file: a run would write through it.
static bool holds_nothing(const fs::directory_entry& entry) {
  std::error_code error;
  if (!fs::is_regular_file(entry.symlink_status(error))) return false;
  const uintmax_t size = entry.file_size(error);
  if (error || size > 64) return false;
  if (size == 0) return true;
  FileDescriptor fd(::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  char bytes[64];
  const long got = fd.valid() ? read_some(fd.get(), bytes, sizeof bytes) : -1;
  if (got != static_cast<long>(size)) return false;
  char out[1];
  const size_t produced = ZSTD_decompress(out, sizeof out, bytes, size);
  return !ZSTD_isError(produced) && produced == 0;
}

// Empty, but for keyshard's own state directory (.keyshard) and files of this run's that hold
// nothing (those a run left that stopped before its first checkpoint, say).
static bool is_empty_directory(const RunConfig& config, std::error_code& error) {
  std::set<std::string> own;
  for (const auto& entry : fs::directory_iterator(config.output_dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name == kStateDirName) continue;
    if (own.empty()) {
      const std::vector<std::string> names = output_file_names(config);
      own.insert(names.begin(), names.end());
      if (config.dead_letter_path == config.output_dir + "/" + kDeadLetterFileName) {
        own.insert(kDeadLetterFileName);
      }
    }
    if (!own.contains(name) || !holds_nothing(entry)) return false;
  }
  return true;
}

Status prepare_outputs(const RunConfig& config, bool continuing) {
  if (config.to_stdout) return {};
  const std::string& dir = config.output_dir;
  std::error_code error;
  if (fs::exists(dir, error)) {
    if (!fs::is_directory(dir, error)) return Status::error("not a directory", dir, kExitUsage);
    if (!config.force && !continuing && !is_empty_directory(config, error)) {
      return Status::error(
          "the output directory is not empty; use --force to write into it anyway (files "
          "keyshard writes are replaced, others are left alone)",
          dir, kExitUsage);
    }
  } else if (Status status = create_output_directory(dir); !status) {
    return status;
  }
  if (error) return Status::error(error.message(), dir);
  return {};
}

// Removes an earlier run's file (a regular file or a symbolic link, gone already is fine) unless
// it is one of `kept` (this run's inputs, say). `what` names it in an error.
static Status remove_earlier_file(const std::string& path, const std::set<FileIdentity>& kept,
                                  const std::string& what) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return {};  // gone already
  if (!S_ISREG(info.st_mode) && !S_ISLNK(info.st_mode)) return {};
  const auto identity = identity_of(path);
  if (identity && kept.contains(*identity)) return {};
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Status::error("cannot remove the earlier run's " + what + ": " + errno_text(errno),
                         path);
  }
  return {};
}

Status unlink_symlinked_outputs(const std::set<std::string>& links) {
  for (const std::string& path : links) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return Status::error("cannot replace the symbolic link: " + errno_text(errno), path);
    }
  }
  return {};
}

Status remove_stale_outputs(const RunConfig& config, const std::vector<std::string>& earlier) {
  const std::vector<std::string> written_names = output_file_names(config);
  const std::set<std::string> written(written_names.begin(), written_names.end());
  std::set<FileIdentity> kept = input_identities(config);
  if (const auto dead_letter = identity_of(config.dead_letter_path)) kept.insert(*dead_letter);
  for (const std::string& name : earlier) {
    if (!is_plain_file_name(name) || written.contains(name)) continue;
    if (Status status = remove_earlier_file(config.output_dir + "/" + name, kept, "output");
        !status) {
      return status;
    }
  }
  return {};
}

Status remove_earlier_reports(const RunConfig& config) {
  std::vector<std::string> names{kSummaryFileName};
  const std::string default_dead = config.output_dir + "/" + kDeadLetterFileName;
  if (config.on_bad != BadLinePolicy::kDeadLetter || config.dead_letter_path != default_dead) {
    names.emplace_back(kDeadLetterFileName);
  }
  const std::set<FileIdentity> inputs = input_identities(config);
  for (const std::string& name : names) {
    if (Status status = remove_earlier_file(config.output_dir + "/" + name, inputs, name);
        !status) {
      return status;
    }
  }
  return {};
}

std::string temporary_path(const std::string& path) { return path + ".tmp"; }

Status write_file_atomically(const std::string& path, std::string_view content, bool durable) {
  const std::string temporary = temporary_path(path);
  (void)::unlink(temporary.c_str());  // a leftover, or a link that must not be written through
  FileDescriptor fd(
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666));
  if (!fd.valid()) return Status::error("cannot create: " + errno_text(errno), temporary);
  Status status = write_all(fd.get(), content, temporary);
  if (status && durable && ::fsync(fd.get()) != 0) {
    status = Status::error("fsync failed: " + errno_text(errno), temporary);
  }
  if (status) status = fd.close(temporary);
  if (status && ::rename(temporary.c_str(), path.c_str()) != 0) {
    status = Status::error("cannot rename into place: " + errno_text(errno), path);
  }
  if (!status) {
    (void)::unlink(temporary.c_str());  // no half-written file left behind
    return status;
  }
  if (durable) return sync_directory(directory_of(path));
  return status;
}

}  // namespace keyshard
