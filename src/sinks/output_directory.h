// Preparing the output directory before a run, and writing files into it atomically.
#pragma once

#include <string>
#include <string_view>

#include "pipeline/run_config.h"
#include "util/status.h"

namespace keyshard {

/// Creates the output directory if needed and refuses a non-empty one without --force (unless
/// `continuing` a checkpointed run in it); checks that the run can hold one open file per
/// partition (raising the soft limit if it must).
Status prepare_outputs(const RunConfig& config, bool continuing = false);

/// DIR as the user gave it, without trailing slashes ("out/" and "out" name one directory in
/// messages, checkpoints and paths built from it; "/" stays).
std::string without_trailing_slashes(std::string dir);

/// Creates the output directory (and its parents) if it does not exist.
Status create_output_directory(const std::string& dir);

/// Writes `content` to `path` through a temporary file and a rename, so readers never see half.
Status write_file_atomically(const std::string& path, std::string_view content);

}  // namespace keyshard
