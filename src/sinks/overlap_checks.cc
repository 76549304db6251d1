#include "sinks/overlap_checks.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "sinks/file_sink.h"
#include "sinks/output_directory.h"
#include "util/number_text.h"

namespace keyshard {

namespace fs = std::filesystem;

namespace {

// Whether `path` is where standard stream `fd` writes (`> out.log` or `| next`, then
// /dev/stdout, /dev/stderr, out.log...). A file opened again there would be written beside the
// stream, each in blocks that end where they fill, so that one's lines would be cut by the
// other's.
bool names_stream_file(const std::string& path, int fd) {
  const auto named = identity_of(path);
  return named && named == stream_file(fd, true);
}

}  // namespace

std::map<FileIdentity, std::string> named_input_identities(const RunConfig& config) {
  std::map<FileIdentity, std::string> inputs;
  for (const std::string& path : config.inputs) {
    if (path == "-") {
      if (const auto identity = stream_file(STDIN_FILENO)) inputs.emplace(*identity, "<stdin>");
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

namespace {

// A path with the links in its directory part resolved, the last component left as it is: two
// spellings of one link ("out/part-0", "alias/part-0") compare equal.
std::string link_path(const std::string& path) {
  std::error_code ignored;
  const fs::path absolute = fs::absolute(path, ignored).lexically_normal();
  return (fs::weakly_canonical(absolute.parent_path(), ignored) / absolute.filename()).string();
}

// The paths of the partition (or worker) files the run writes: DIR/NAME.
std::vector<std::string> output_paths(const RunConfig& config) {
  std::vector<std::string> paths;
  for (const std::string& name : output_file_names(config)) {
    paths.push_back(config.output_dir + "/" + name);
  }
  return paths;
}

// The files the run makes, replaces or removes in DIR, by name: its partition (or worker) files
// and summary, the summary's temporary file (renamed over it); and in DIR/.keyshard, the
// checkpoint, its temporary file and the lock. None with -o -.
struct RunFiles {
  std::vector<std::string> in_dir;
  std::vector<std::string> in_state_dir;
};

RunFiles run_files(const RunConfig& config) {
  RunFiles files;
  if (config.to_stdout) return files;
  files.in_dir = output_file_names(config);
  files.in_dir.push_back(temporary_path(kSummaryFileName));
  files.in_state_dir = {kCheckpointFileName, temporary_path(kCheckpointFileName), kLockFileName};
  return files;
}

// Where a path leads, following symbolic links to a file that does not exist (yet).
fs::path where_link_leads(const std::string& named) {
  std::error_code error;
  fs::path path = fs::absolute(named, error);
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(path, error)); ++hops) {
    const fs::path target = fs::read_symlink(path, error);
    if (error) break;
    path = target.is_absolute() ? target : path.parent_path() / target;
  }
  return path;
}

// The dead-letter file's path, absolute, with the links in it resolved (a link to a file that
// does not exist yet too: it is created where the link leads); a link that --force replaces
// (`replaced`) is not followed, as a new file takes its place. Empty when the run
// writes none, or on `error` (its directory cannot be reached: opening it says so).
fs::path resolved_dead_letter(const RunConfig& config, const std::set<std::string>& replaced,
                              std::error_code& error) {
  if (config.on_bad != BadLinePolicy::kDeadLetter || config.dead_letter_path.empty()) return {};
  const fs::path named = fs::absolute(config.dead_letter_path, error);
  if (error) return {};
  fs::path dead = replaced.contains(config.dead_letter_path)
                      ? fs::weakly_canonical(named.parent_path(), error) / named.filename()
                      : fs::weakly_canonical(where_link_leads(config.dead_letter_path), error);
  return error ? fs::path() : dead;
}

}  // namespace

std::set<std::string> links_force_replaces(const RunConfig& config) {
  std::set<std::string> links;
  if (!config.force || config.to_stdout) return links;
  std::vector<std::string> paths = output_paths(config);
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

Status check_outputs_are_files(const RunConfig& config) {
  if (config.to_stdout) return {};
  std::vector<std::string> paths;
  for (const std::string& name : output_file_names(config)) {
    // (The summary is written through a temporary file renamed over whatever is there.)
    if (name != kSummaryFileName) paths.push_back(config.output_dir + "/" + name);
  }
  if (config.checkpoints && config.on_bad == BadLinePolicy::kDeadLetter &&
      !config.dead_letter_path.empty()) {
    paths.push_back(config.dead_letter_path);
  }
  for (const std::string& path : paths) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode) && !S_ISLNK(info.st_mode)) {
      return not_a_regular_output(path, info.st_mode);
    }
  }
  return {};
}

std::vector<std::string> output_file_names(const RunConfig& config) {
  std::vector<std::string> names;
  if (config.to_stdout) return names;
  if (config.exec() && config.exec_per_worker) {
    for (unsigned w = 0; w < config.threads; ++w) names.push_back(worker_file_name(w));
  } else {
    for (uint32_t p = 0; p < config.partitions; ++p) {
      names.push_back(partition_file_name(config, p));
    }
  }
  names.emplace_back(kSummaryFileName);
  return names;
}

namespace {

// Whether `path` (absolute) may name a file once the run has made DIR (`dir`, absolute and
// normal): each component before a ".." must then be a directory, as the system resolves
// "a/../b" through a. A path through a directory that does not exist, and is not DIR or one
// the run makes on the way to it, never leads anywhere.
bool may_exist_later(const fs::path& path, const fs::path& dir) {
  fs::path prefix;
  for (const fs::path& component : path) {
    if (component == "..") {
      const fs::path normal = prefix.lexically_normal();
      const auto [end, unused] = std::mismatch(normal.begin(), normal.end(), dir.begin(),
                                               dir.end());
      const bool made_by_run = end == normal.end() || normal == dir / kStateDirName;
      std::error_code error;
      if (!made_by_run && !fs::is_directory(prefix, error)) return false;
    }
    prefix /= component;
  }
  return true;
}

// An input that does not exist yet has no identity to compare, but it may be a file this run
// creates before that input's turn comes: the run would then read its own output (nothing, or
// what it writes, until the disk is full). So such an input is compared by path.
Status check_missing_inputs(const RunConfig& config, const std::set<std::string>& replaced) {
  std::error_code error;
  const fs::path dir = config.to_stdout
                           ? fs::path()
                           : fs::absolute(config.output_dir, error).lexically_normal();
  std::vector<std::pair<fs::path, const std::string*>> missing;  // resolved path, as named
  for (const std::string& input : config.inputs) {
    struct stat info {};
    if (input == "-" || ::stat(input.c_str(), &info) == 0) continue;
    const fs::path leads_to = where_link_leads(input);
    if (!may_exist_later(leads_to, dir)) continue;  // opening it fails
    const fs::path path = fs::weakly_canonical(leads_to, error);
    if (!error) missing.emplace_back(path, &input);
  }
  if (missing.empty()) return {};
  fs::path canonical_dir;
  if (!config.to_stdout) {
    canonical_dir = fs::weakly_canonical(dir, error);
    if (error) return {};
  }
  const RunFiles files = run_files(config);
  const std::set<std::string> names(files.in_dir.begin(), files.in_dir.end());
  const std::set<std::string> state_names(files.in_state_dir.begin(), files.in_state_dir.end());
  const fs::path dead_letter = resolved_dead_letter(config, replaced, error);
  for (const auto& [path, input] : missing) {
    const fs::path parent = path.parent_path();
    const std::string name = path.filename().string();
    const bool in_dir = !canonical_dir.empty() &&
                        ((parent == canonical_dir && names.contains(name)) ||
                         (parent == canonical_dir / kStateDirName && state_names.contains(name)));
    if (in_dir || (!dead_letter.empty() && path == dead_letter)) {
      return Status::error("is both an input and an output of this run: it does not exist yet, "
                           "and this run would create it, then read what it writes (name "
                           "another input)",
                           *input, kExitUsage);
    }
  }
  return {};
}

}  // namespace

Status check_inputs_are_not_outputs(const RunConfig& config,
                                    const std::set<std::string>& replaced) {
  if (Status status = check_missing_inputs(config, replaced); !status) return status;
  const std::map<FileIdentity, std::string> inputs = named_input_identities(config);
  if (inputs.empty()) return {};
  std::vector<std::string> paths;
  const RunFiles files = run_files(config);
  for (const std::string& name : files.in_dir) paths.push_back(config.output_dir + "/" + name);
  for (const std::string& name : files.in_state_dir) {
    paths.push_back(config.output_dir + "/" + kStateDirName + "/" + name);
  }
  if (config.on_bad == BadLinePolicy::kDeadLetter && !config.dead_letter_path.empty()) {
    paths.push_back(config.dead_letter_path);
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
  if (const auto out = config.to_stdout ? stream_file(STDOUT_FILENO) : std::nullopt) {
    const auto input = inputs.find(*out);
    if (input != inputs.end()) {
      return Status::error("standard output is this input; keyshard would read what it writes "
                           "(write to another file)",
                           input->second, kExitUsage);
    }
  }
  return {};
}

bool is_standard_error_file(const std::string& path) {
  return names_stream_file(path, STDERR_FILENO);
}

Status check_dead_letter_is_new(const RunConfig& config, bool continuing) {
  if (config.on_bad != BadLinePolicy::kDeadLetter || config.dead_letter_path.empty() ||
      config.force || continuing) {
    return {};
  }
  const std::string& path = config.dead_letter_path;
  if (!config.to_stdout && name_inside(config.output_dir, path)) return {};
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_size == 0 ||
      (config.to_stdout && is_standard_error_file(path))) {
    return {};
  }
  return Status::error(fmt::format("--dead-letter names a file of {} bytes, which the run would "
                                   "empty: name another file, or give --force to replace it",
                                   with_commas(static_cast<uint64_t>(info.st_size))),
                       path, kExitUsage);
}

Status check_dead_letter_is_apart(const RunConfig& config,
                                  const std::set<std::string>& replaced) {
  if (config.on_bad != BadLinePolicy::kDeadLetter || config.dead_letter_path.empty()) return {};
  if (config.to_stdout) {
    // `-o - --dead-letter bad.ndjson > bad.ndjson` would write the events and the dead letters
    // over each other.
    if (names_stream_file(config.dead_letter_path, STDOUT_FILENO)) {
      return Status::error("--dead-letter names the file standard output is; name a file of its "
                           "own",
                           config.dead_letter_path, kExitUsage);
    }
    return {};
  }
  if (is_standard_error_file(config.dead_letter_path)) {
    return Status::error("--dead-letter names the file standard error is, where keyshard writes "
                         "its messages; with -o DIR the dead-letter file is an output of its own "
                         "(synced, and cut back on resume): name another file, or leave "
                         "--dead-letter out for DIR/dead-letter.ndjson",
                         config.dead_letter_path, kExitUsage);
  }
  // Compared as paths (neither file may exist yet), with links in the existing part resolved;
  // and as files, for a hard link.
  // (A link that --force replaces is not followed: a new file takes its place.)
  std::error_code error;
  const fs::path dead = resolved_dead_letter(config, replaced, error);
  if (error) return {};  // no working directory, or its directory cannot be reached
  const fs::path dir = fs::weakly_canonical(fs::absolute(config.output_dir), error);
  if (error) return {};
  const auto refuse = [&](const std::string& what) {
    return Status::error("--dead-letter names " + what + "; name a file of its own",
                         config.dead_letter_path, kExitUsage);
  };
  const auto dead_identity = replaced.contains(config.dead_letter_path)
                                 ? std::nullopt
                                 : identity_of(config.dead_letter_path);
  for (const std::string& name : run_files(config).in_dir) {
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

}  // namespace keyshard
