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

#include "util/files.h"

namespace keyshard {

namespace fs = std::filesystem;

namespace {

constexpr uint64_t kSpareFiles = 32;  // inputs, dead letters, the summary, libraries

Status check_open_file_limit(const RunConfig& config) {
  // With --exec, keyshard holds up to three pipes per child (its stdin, stdout and stderr).
  const uint64_t children =
      !config.exec() ? 0 : config.exec_per_worker ? config.threads : config.partitions;
  const uint64_t files = config.to_stdout || config.exec() ? 0 : config.partitions;
  const uint64_t needed = files + 3 * children + kSpareFiles;
  const uint64_t limit = raise_open_file_limit();
  const std::string hint = config.exec() && !config.exec_per_worker
                               ? " or use --exec-per worker (one child per worker thread)"
                               : " or use fewer partitions";
  if (needed > limit) {
    return Status::error(
        "-n " + std::to_string(config.partitions) + " needs about " + std::to_string(needed) +
            " open files, but this process may open only " + std::to_string(limit) +
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

}  // namespace

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
    return Status::error("cannot create the output directory: " +
                             (error ? error.message() : std::string("it is not a directory")),
                         dir);
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
  if (Status status = check_open_file_limit(config); !status) return status;
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

namespace {

using FileIdentity = std::pair<dev_t, ino_t>;

std::optional<FileIdentity> identity_of(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  return FileIdentity{info.st_dev, info.st_ino};
}

// The files the inputs are, standard input included when it is a file (`< FILE`).
std::map<FileIdentity, std::string> named_input_identities(const RunConfig& config) {
  std::map<FileIdentity, std::string> inputs;
  for (const std::string& path : config.inputs) {
    if (path == "-") {
      struct stat info {};
      if (::fstat(STDIN_FILENO, &info) == 0 && S_ISREG(info.st_mode)) {
        inputs.emplace(FileIdentity{info.st_dev, info.st_ino}, "<stdin>");
      }
    } else if (auto identity = identity_of(path)) {
      inputs.emplace(*identity, path);
    }
  }
  return inputs;
}

std::set<FileIdentity> input_identities(const RunConfig& config) {
  std::set<FileIdentity> inputs;
  for (const auto& [identity, name] : named_input_identities(config)) inputs.insert(identity);
  return inputs;
}

// A path with the links in its directory part resolved, the last component left as it is: two
// spellings of one link ("out/part-0", "alias/part-0") compare equal.
std::string link_path(const std::string& path) {
  std::error_code ignored;
  const fs::path absolute = fs::absolute(path, ignored).lexically_normal();
  return (fs::weakly_canonical(absolute.parent_path(), ignored) / absolute.filename()).string();
}

}  // namespace

std::set<std::string> links_force_replaces(const RunConfig& config) {
  std::set<std::string> links;
  if (!config.force || config.to_stdout) return links;
  std::vector<std::string> paths;
  for (const std::string& name : output_file_names(config)) {
    paths.push_back(config.output_dir + "/" + name);
  }
  if (config.on_bad == BadLinePolicy::kDeadLetter && !config.dead_letter_path.empty()) {
    // (only in DIR: a dead-letter file named elsewhere is written where its path leads)
    const std::string parent = fs::path(config.dead_letter_path).parent_path().string();
    const auto dir = identity_of(config.output_dir);
    if (dir && identity_of(parent.empty() ? "." : parent) == dir) {
      paths.push_back(config.dead_letter_path);
    }
  }
  std::set<std::string> inputs;  // a link named as an input is read, so it stays
  for (const std::string& input : config.inputs) {
    if (input != "-") inputs.insert(link_path(input));
  }
  for (const std::string& path : paths) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode) &&
        !inputs.contains(link_path(path))) {
      links.insert(path);
    }
  }
  return links;
}

std::vector<std::string> output_file_names(const RunConfig& config) {
  std::vector<std::string> names;
  if (config.to_stdout) return names;
  if (config.exec() && config.exec_per_worker) {
    for (unsigned w = 0; w < config.threads; ++w) names.push_back(worker_file_name(config, w));
  } else {
    for (uint32_t p = 0; p < config.partitions; ++p) {
      names.push_back(partition_file_name(config, p));
    }
  }
  names.emplace_back(kSummaryFileName);
  return names;
}

Status check_inputs_are_not_outputs(const RunConfig& config,
                                    const std::set<std::string>& replaced) {
  const std::map<FileIdentity, std::string> inputs = named_input_identities(config);
  if (inputs.empty()) return {};
  std::vector<std::string> paths;
  for (const std::string& name : output_file_names(config)) {
    paths.push_back(config.output_dir + "/" + name);
  }
  if (config.on_bad == BadLinePolicy::kDeadLetter && !config.dead_letter_path.empty()) {
    paths.push_back(config.dead_letter_path);
  }
  if (!config.to_stdout) {
    // And the files the run replaces or removes as it goes: the summary's temporary file, and
    // whatever DIR/.keyshard holds (the checkpoint, its temporary file, the lock).
    paths.push_back(temporary_path(config.output_dir + "/" + kSummaryFileName));
    const std::string state = config.output_dir + "/" + kStateDirName;
    std::error_code error;
    for (fs::directory_iterator entry(state, error), end; !error && entry != end;
         entry.increment(error)) {
      paths.push_back(entry->path().string());
    }
  }
  for (const std::string& path : paths) {
    if (replaced.contains(path)) continue;  // a new file takes its place
    const auto identity = identity_of(path);
    const auto input = identity ? inputs.find(*identity) : inputs.end();
    if (input != inputs.end()) {
      const std::string as = input->second == "<stdin>" ? " (on standard input)" : "";
      return Status::error("is both an input" + as + " and an output of this run; it would be "
                           "written over while it is read (move it out of the way first)",
                           path, kExitUsage);
    }
  }
  // `keyshard split -o - app.log >> app.log` would read its own output for ever.
  struct stat out {};
  if (config.to_stdout && ::fstat(STDOUT_FILENO, &out) == 0 && S_ISREG(out.st_mode)) {
    const auto input = inputs.find(FileIdentity{out.st_dev, out.st_ino});
    if (input != inputs.end()) {
      return Status::error("standard output is this input; keyshard would read what it writes "
                           "(write to another file)",
                           input->second, kExitUsage);
    }
  }
  return {};
}

Status check_dead_letter_is_apart(const RunConfig& config,
                                  const std::set<std::string>& replaced) {
  if (config.to_stdout || config.on_bad != BadLinePolicy::kDeadLetter ||
      config.dead_letter_path.empty()) {
    return {};
  }
  // Compared as paths (neither file may exist yet), with links in the existing part resolved;
  // and as files, for a hard link.
  // (A link that --force replaces is not followed: a new file takes its place.)
  std::error_code error;
  const fs::path named = fs::absolute(config.dead_letter_path, error);
  if (error) return {};  // no working directory: opening it says so
  const fs::path dead = replaced.contains(config.dead_letter_path)
                            ? fs::weakly_canonical(named.parent_path(), error) / named.filename()
                            : fs::weakly_canonical(named, error);
  if (error) return {};  // its directory cannot be reached: opening it says so
  const fs::path dir = fs::weakly_canonical(fs::absolute(config.output_dir), error);
  if (error) return {};
  const auto refuse = [&](const std::string& what) {
    return Status::error("--dead-letter names " + what + "; name a file of its own",
                         config.dead_letter_path, kExitUsage);
  };
  const auto dead_identity = replaced.contains(config.dead_letter_path)
                                 ? std::nullopt
                                 : identity_of(config.dead_letter_path);
  std::vector<std::string> names = output_file_names(config);
  names.push_back(temporary_path(kSummaryFileName));  // renamed over the summary
  for (const std::string& name : names) {
    const bool same_path = dead == dir / name;
    const std::string path = config.output_dir + "/" + name;
    const auto identity = replaced.contains(path) ? std::nullopt : identity_of(path);
    if (same_path || (identity && dead_identity && *identity == *dead_identity)) {
      return refuse(name == kSummaryFileName         ? "the run's summary file"
                    : name.starts_with(kSummaryFileName) ? "the temporary file of its summary"
                                                         : "one of the run's own output files");
    }
  }
  const fs::path state = dir / kStateDirName;
  const auto [end, unused] = std::mismatch(state.begin(), state.end(), dead.begin(), dead.end());
  if (end == state.end()) return refuse("a file of the run's checkpoint directory (.keyshard)");
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
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
        written.contains(name)) {
      continue;
    }
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

Status write_file_atomically(const std::string& path, std::string_view content) {
  const std::string temporary = temporary_path(path);
  (void)::unlink(temporary.c_str());  // a leftover, or a link that must not be written through
  FileDescriptor fd(
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666));
  if (!fd.valid()) return Status::error("cannot create: " + errno_text(errno), temporary);
  Status status = write_all(fd.get(), content, temporary);
  if (status) status = fd.close(temporary);
  if (status && ::rename(temporary.c_str(), path.c_str()) != 0) {
    status = Status::error("cannot rename into place: " + errno_text(errno), path);
  }
  if (!status) (void)::unlink(temporary.c_str());  // no half-written file left behind
  return status;
}

}  // namespace keyshard
