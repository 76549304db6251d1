// `keyshard verify DIR`: re-reads every output against the manifest in DIR's checkpoint (per
// file: size, lines and content hash of what was committed) and names each file that was
// changed, truncated, extended or removed behind keyshard's back. Exit 0 only when all match.
#include <fcntl.h>
#include <fnmatch.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <vector>

#include "checkpoint/checkpoint_store.h"
#include "checkpoint/content_hash.h"
#include "cli/app.h"
#include "cli/option_values.h"
#include "cli/recorded_options.h"
#include "sinks/output_directory.h"
#include "util/files.h"
#include "util/number_text.h"

namespace keyshard {
namespace {

// Lines in the first `size` bytes of the file, decompressing a zstd file.
Status count_lines(int fd, const std::string& name, uint64_t size, bool compressed,
                   uint64_t& lines) {
  lines = 0;
  if (::lseek(fd, 0, SEEK_SET) < 0) return Status::error("cannot seek: " + errno_text(errno), name);
  std::unique_ptr<ZSTD_DStream, size_t (*)(ZSTD_DStream*)> stream(
      compressed ? ZSTD_createDStream() : nullptr, ZSTD_freeDStream);
  std::string in(1 << 20, '\0'), out(compressed ? ZSTD_DStreamOutSize() : 0, '\0');
  uint64_t left = size;
  while (left > 0) {
    const long got = read_some(fd, in.data(), std::min<uint64_t>(in.size(), left));
    if (got < 0) return Status::error("read failed: " + errno_text(errno), name);
    if (got == 0) break;
    left -= static_cast<uint64_t>(got);
    auto count = [&lines](const char* p, size_t n) {
      for (const char* end = p + n; (p = static_cast<const char*>(std::memchr(p, '\n', end - p)));
           ++p) {
        ++lines;
      }
    };
    if (!compressed) {
      count(in.data(), static_cast<size_t>(got));
      continue;
    }
    ZSTD_inBuffer input{in.data(), static_cast<size_t>(got), 0};
    while (input.pos < input.size) {
      ZSTD_outBuffer output{out.data(), out.size(), 0};
      const size_t result = ZSTD_decompressStream(stream.get(), &output, &input);
      if (ZSTD_isError(result)) {
        return Status::error(std::string("not a valid zstd stream: ") + ZSTD_getErrorName(result),
                             name);
      }
      count(out.data(), output.pos);
    }
  }
  return {};
}

// "" when the file matches its record; else what is wrong with it. `unreadable`: it could not be
// opened or read, so whether it matches is not known.
std::string check_output(const std::string& path, const OutputState& recorded, bool compressed,
                         bool complete, bool& unreadable) {
  unreadable = false;
  // (O_NONBLOCK: a FIFO put in a file's place must not hold verify up; it is refused below.)
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) {
    // An unfinished run's output that holds nothing yet: a crash may leave it missing (it was
    // not yet synced), and `resume` creates it again.
    if (errno == ENOENT && recorded.size == 0 && !complete) return {};
    if (errno == ENOENT) {
      return fmt::format("missing: the checkpoint records {} byte{}", with_commas(recorded.size),
                         recorded.size == 1 ? "" : "s");
    }
    unreadable = true;
    return "cannot open: " + errno_text(errno);
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    unreadable = true;
    return "cannot stat: " + errno_text(errno);
  }
  if (!S_ISREG(info.st_mode)) {
    return S_ISDIR(info.st_mode) ? "not a file: a directory is in its place"
                                 : "not a regular file any more";
  }
  const auto size = static_cast<uint64_t>(info.st_size);
  if (size < recorded.size) {
    return fmt::format("truncated: {} byte{}, the checkpoint records {}", with_commas(size),
                       size == 1 ? "" : "s", with_commas(recorded.size));
  }
  uint64_t digest = 0, read = 0;
  if (Status status = hash_file_prefix(fd.get(), path, recorded.size, digest, read); !status) {
    unreadable = true;
    return status.reason();
  }
  if (read != recorded.size || digest != recorded.digest) {
    return "changed: its content differs from what keyshard wrote";
  }
  uint64_t lines = 0;
  if (Status status = count_lines(fd.get(), path, recorded.size, compressed, lines); !status) {
    return status.reason();
  }
  if (lines != recorded.lines) {
    return fmt::format("changed: {} line{}, the checkpoint records {}", with_commas(lines),
                       lines == 1 ? "" : "s", with_commas(recorded.lines));
  }
  if (size > recorded.size) {
    const uint64_t after = size - recorded.size;
    return fmt::format("extended: {} byte{} after the {} the checkpoint records{}",
                       with_commas(after), after == 1 ? "" : "s", with_commas(recorded.size),
                       complete ? "" : " (written after the last checkpoint; `keyshard resume` "
                                       "cuts them and writes them again)");
  }
  return {};
}

// The shell pattern that picks out the partition files of a --name template: each replacement
// field ("{partition:05}") a '*', the rest as it stands ("part-*.ndjson"; ".zst" after it when
// they are compressed).
std::string partition_glob(const std::string& name_template, bool compressed) {
  std::string glob;
  for (size_t at = 0; at < name_template.size(); ++at) {
    const char c = name_template[at];
    if ((c == '{' || c == '}') && at + 1 < name_template.size() && name_template[at + 1] == c) {
      glob += c;  // "{{" and "}}" stand for a brace
      ++at;
    } else if (c == '{') {
      glob += '*';
      at = std::min(name_template.find('}', at), name_template.size());
    } else {
      if (c == '*' || c == '?' || c == '[' || c == '\\') glob += '\\';
      glob += c;
    }
  }
  return compressed ? glob + ".zst" : glob;
}

// The files in DIR that the checkpoint does not name, yet that the pattern of the partition
// files' names matches: what reads the partitions by that pattern (out/part-*.ndjson) takes such
// a file for one. Other files (a note, a subdirectory) are none of verify's business.
std::vector<std::string> files_named_like_outputs(const std::string& dir,
                                                  const Checkpoint& checkpoint,
                                                  const std::string& glob) {
  std::set<std::string> named;
  for (const OutputState& output : checkpoint.outputs) named.insert(output.file);
  if (checkpoint.dead_letter) named.insert(checkpoint.dead_letter->file);  // (a name in DIR)
  std::vector<std::string> found;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    std::error_code kind_error;
    if (named.contains(name) || ::fnmatch(glob.c_str(), name.c_str(), FNM_PERIOD) != 0 ||
        entry.is_directory(kind_error)) {
      continue;
    }
    found.push_back(name);
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

CLI::App* add_verify_command(CLI::App& app, VerifyOptions& o) {
  CLI::App* verify =
      app.add_subcommand("verify", "Check DIR's outputs against its checkpoint's manifest");
  verify->footer(
      "Examples:\n"
      "  keyshard verify out/\n"
      "  keyshard verify -q out/ || echo 'out/ was changed'");
  verify->add_option("dir", o.dir, "The output directory of a split")
      ->required()
      ->type_name("DIR");
  verify->add_flag("-q,--quiet", o.quiet, "Print only the files that differ")->group("Reporting");
  return verify;
}

Status run_verify(const VerifyOptions& o) {
  if (o.dir.empty()) return usage(kEmptyDir);
  const std::string dir = without_trailing_slashes(o.dir);
  Checkpoint checkpoint;
  if (Status status = load_checkpoint(dir, checkpoint); !status) return status;
  if (run_is_writing(dir)) {
    // Its files hold what it wrote since its last checkpoint, or are being cut back to it.
    return Status::error("a keyshard run is writing here, so its files are not those of a "
                         "checkpoint; verify once it has ended",
                         dir, kExitLocked);
  }
  if (checkpoint.exec) {
    return Status::error("the outputs of an --exec run are written by its children, so they "
                         "have no manifest to check",
                         dir, kExitUsage);
  }
  // The partition files are zstd files when the run was told to compress them, whatever their
  // names (the dead-letter file never is).
  SplitOptions options;
  RunConfig config;
  if (Status status = restore_options(checkpoint.options, checkpoint_path(dir), options);
      !status) {
    return status;
  }
  if (Status status = parse_compress(options.compress, config); !status) {
    return Status::error("the checkpoint records an invalid --compress: " + status.message(),
                         checkpoint_path(dir));
  }
  uint64_t files = 0, bad = 0, unreadable = 0, extended = 0, lines = 0, bytes = 0;
  auto check = [&](const std::string& path, const OutputState& recorded, bool compressed) {
    ++files;
    bool unknown = false;
    const std::string problem =
        check_output(path, recorded, compressed, checkpoint.complete, unknown);
    if (!problem.empty()) {
      ++bad;
      if (unknown) ++unreadable;  // (not known to differ: counted apart)
      if (problem.starts_with("extended:")) ++extended;
      // (One line a file, whatever its name holds: control bytes are shown as escapes.)
      std::fprintf(stdout, "%s: %s\n", visible_controls(path).c_str(),
                   visible_controls(problem).c_str());
    }
    lines += recorded.lines;
    bytes += recorded.size;
  };
  for (const OutputState& output : checkpoint.outputs) {
    check(dir + "/" + output.file, output, config.zstd_level.has_value());
  }
  if (checkpoint.dead_letter) {
    const std::string& file = checkpoint.dead_letter->file;
    check(file.starts_with('/') ? file : dir + "/" + file, *checkpoint.dead_letter, false);
  }
  const std::vector<std::string> strays = files_named_like_outputs(
      dir, checkpoint, partition_glob(options.name, config.zstd_level.has_value()));
  for (const std::string& name : strays) {
    std::fprintf(stdout, "%s: not written by the run: the checkpoint names no such file, yet the "
                         "pattern of the partition files' names matches it\n",
                 visible_controls(dir + "/" + name).c_str());
  }
  std::fflush(stdout);
  // "1 other file is named like a partition file and is not the run's: move it away (...)"
  const bool one = strays.size() == 1;
  const std::string stray_text =
      strays.empty()
          ? std::string()
          : fmt::format("{} other file{} named like {} and {} not the run's: move {} away, or "
                        "what reads the partitions by a pattern takes {} for one (--force "
                        "leaves such files where they are)",
                        with_commas(strays.size()), one ? " is" : "s are",
                        one ? "a partition file" : "partition files", one ? "is" : "are",
                        one ? "it" : "them", one ? "it" : "each");
  if (bad == 0 && !strays.empty()) {
    if (o.quiet) return Status::reported(kExitFailure);
    return Status::error(fmt::format("{} the checkpoint, yet {}",
                                     files == 1 ? std::string("the 1 file matches")
                                                : "all " + with_commas(files) + " files match",
                                     stray_text),
                         dir);
  }
  if (bad > 0) {
    if (o.quiet) return Status::reported(kExitFailure);  // -q: the files that differ, only
    // "2 of 9 files differ from the checkpoint", "1 of 9 files cannot be read, so whether it
    // matches the checkpoint is not known", or "2 of 9 files differ from the checkpoint, and 1
    // cannot be read".
    const uint64_t differ = bad - unreadable;
    const std::string of = fmt::format("of {} file{}", with_commas(files), files == 1 ? "" : "s");
    std::string what;
    if (differ == 0) {
      what = fmt::format("{} {} cannot be read, so whether {} the checkpoint is not known",
                         with_commas(unreadable), of,
                         unreadable == 1 ? "it matches" : "they match");
    } else {
      what = fmt::format("{} {} differ{} from the checkpoint", with_commas(differ), of,
                         differ == 1 ? "s" : "");
      if (unreadable > 0) what += fmt::format(", and {} cannot be read", with_commas(unreadable));
      // What next: resume cuts an unfinished run's bytes after its checkpoint; keyshard mends
      // nothing else it did not write.
      what += checkpoint.complete ? "; to have the outputs anew, run the split again with --force"
              : extended == differ
                  ? "; keyshard resume cuts the bytes written after the checkpoint and goes on"
                  : "; resume refuses a file changed within what the checkpoint records: run "
                    "the split again with --force";
    }
    if (!strays.empty()) what += "; and " + stray_text;
    return Status::error(what, dir);
  }
  if (!o.quiet) {
    const std::string line = fmt::format(
        "{}: {} the checkpoint ({} line{}, {} byte{}{})\n", visible_controls(dir),
        files == 1 ? std::string("the 1 file matches")
                   : "all " + with_commas(files) + " files match",
        with_commas(lines), lines == 1 ? "" : "s", with_commas(bytes), bytes == 1 ? "" : "s",
        checkpoint.complete ? "" : "; the run is not finished");
    std::fwrite(line.data(), 1, line.size(), stdout);
  }
  return {};
}

}  // namespace keyshard
