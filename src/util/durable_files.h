// Making a run's output files durable (--commit sync) without syncfs(). syncfs() writes back
// every dirty page of the filesystem, other processes' included: beside a program writing
// gigabytes, each checkpoint of a small run would wait for all of them. Here only the files
// named are synced: the writeback of every one is started first, so that the disk works on all
// of them at once, and then each is fsynced (from several threads when there are many), which
// waits for its pages and commits its size.
#pragma once

#include <string>
#include <vector>

#include "util/status.h"

namespace keyshard {

/// Makes the regular files and directories at `paths` durable (a directory: its entries, so
/// files created in it). Pipes, devices and other special files are passed over, and so is a
/// directory on a filesystem that cannot fsync one (EINVAL). A path that cannot be opened, or
/// any other failed fsync, is an error naming the path.
Status make_durable(const std::vector<std::string>& paths);

/// fsyncs the directory `dir`, so that a rename or a new file in it is durable; on a filesystem
/// that cannot fsync a directory (EINVAL), as durable as that filesystem makes it.
Status sync_directory(const std::string& dir);

}  // namespace keyshard
