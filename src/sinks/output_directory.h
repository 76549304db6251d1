// Preparing the output directory before a run, and writing files into it atomically.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/run_config.h"
#include "util/status.h"

namespace keyshard {

/// Creates the output directory if needed and refuses a non-empty one without --force (unless
/// `continuing` a checkpointed run in it). check_open_file_limit() comes first.
Status prepare_outputs(const RunConfig& config, bool continuing = false);

/// That the run can hold its outputs (or --exec children's pipes) open, raising the soft limit
/// on open files to the hard limit if it must; a usage error (status 2) when even that is short.
/// `resuming`: the message does not suggest options that resume keeps from the run.
Status check_open_file_limit(const RunConfig& config, bool resuming = false);

/// DIR as the user gave it, without trailing slashes ("out/" and "out" name one directory in
/// messages, checkpoints and paths built from it; "/" stays).
std::string without_trailing_slashes(std::string dir);

/// Creates the output directory (and its parents) if it does not exist. `created` (when given)
/// receives the directories made, deepest first.
Status create_output_directory(const std::string& dir,
                               std::vector<std::string>* created = nullptr);

/// The names of the files this run writes in DIR: its partition files (or, with --exec-per
/// worker, its worker files) and the summary. None with -o -.
std::vector<std::string> output_file_names(const RunConfig& config);

/// Removes the `links` of links_force_replaces(), once the checks have passed.
Status unlink_symlinked_outputs(const std::set<std::string>& links);

/// --force over an earlier run: removes the files of `earlier` (names within DIR, from its
/// checkpoint) that this run does not write, so they are not taken for its output. Only plain
/// names of regular files or symlinks are touched, never one of this run's inputs.
Status remove_stale_outputs(const RunConfig& config, const std::vector<std::string>& earlier);

/// --force: removes the earlier run's summary (this run writes its own at its end, and none if
/// it fails) and DIR's default dead-letter file when this run keeps no dead letters there.
Status remove_earlier_reports(const RunConfig& config);

/// Writes `content` to `path` through a temporary file and a rename, so readers never see half.
/// With `durable` (--commit sync), the file is fsynced before the rename and its directory
/// after it, so that a power cut leaves the whole file or none.
Status write_file_atomically(const std::string& path, std::string_view content,
                             bool durable = false);

/// The temporary file write_file_atomically() writes `path` through.
std::string temporary_path(const std::string& path);

}  // namespace keyshard
