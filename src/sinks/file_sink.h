// A sink that writes straight to a file descriptor: a partition file, or stdout.
#pragma once

#include <memory>
#include <string>

#include "sinks/sink.h"
#include "util/files.h"

namespace keyshard {

/// Opens `path` with `flags` (O_CREAT among them) as an output of a run into DIR, which keyshard
/// keeps as a regular file (synced, its size checkpointed, cut back on resume). Anything else in
/// its place is refused, naming what it is: a FIFO (which open() would wait on for a reader), a
/// device, a directory. "cannot create: ..." for the other failures.
Status open_regular_output(const std::string& path, int flags, FileDescriptor& fd);

/// The refusal open_regular_output() gives for `path`, found to be of file type `mode`
/// (st_mode) where an output belongs: what it is, and what to do.
Status not_a_regular_output(const std::string& path, unsigned mode);

/// Creates (or truncates) `path` for writing. With `tracked`, the sink keeps the file's size and
/// content hash for checkpoints (see ContentHash), and `path` must be a regular file (see
/// open_regular_output).
/// With `write_behind` (--commit sync), the writeback to the disk of each MiB written is started
/// at once (by WriteBehind's thread), so that the sync before a checkpoint has little left to
/// wait for. With `direct` (--commit sync, a plain file), whole blocks are written past the page
/// cache where the file system takes direct writes (see sinks/direct_writer.h); settle() waits
/// for them.
Status open_file_sink(const std::string& path, std::unique_ptr<Sink>& sink, bool tracked = false,
                      bool write_behind = false, bool direct = false);

/// Reopens `path` to continue a checkpointed run: checks the content hash of its first
/// `recorded.size` bytes (what was committed), and appends from there. A file shorter than the
/// record, or whose kept bytes differ, is refused. With `finished`, the record is that of a run
/// that ended (no run has written to the file since): a longer file is refused too, rather than
/// the bytes someone added being cut. Otherwise the bytes past the record are cut by the sink's
/// cut_back(), which the caller makes once every output passed these checks (the first write,
/// sync() or finish() cut otherwise).
Status reopen_file_sink(const std::string& path, const OutputState& recorded, bool finished,
                        std::unique_ptr<Sink>& sink, bool write_behind = false,
                        bool direct = false);

/// Opens `path` (created if missing) to append to it: a resumed --exec run's output.
Status open_append_sink(const std::string& path, std::unique_ptr<Sink>& sink);

/// A sink on standard output. A closed stdout (EPIPE) ends the run quietly with status 0.
std::unique_ptr<Sink> make_stdout_sink();

/// A sink on standard error, for dead-letter records when there is no output directory.
std::unique_ptr<Sink> make_stderr_sink();

}  // namespace keyshard
