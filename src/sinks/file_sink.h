// A sink that writes straight to a file descriptor: a partition file, or stdout.
#pragma once

#include <memory>
#include <string>

#include "sinks/sink.h"
#include "util/files.h"

namespace keyshard {

/// Creates (or truncates) `path` for writing.
Status open_file_sink(const std::string& path, std::unique_ptr<Sink>& sink);

/// A sink on standard output. A closed stdout (EPIPE) ends the run quietly with status 0.
std::unique_ptr<Sink> make_stdout_sink();

/// A sink on standard error, for dead-letter records when there is no output directory.
std::unique_ptr<Sink> make_stderr_sink();

}  // namespace keyshard
