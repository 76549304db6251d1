// The checks that keep a run from reading or writing over its own files: no input, and no
// dead-letter file, may be a file the run writes, replaces or removes. Files are compared by
// identity (hard links, symbolic links) and, when they do not exist yet, by path.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "pipeline/run_config.h"
#include "util/files.h"
#include "util/status.h"

namespace keyshard {

/// The files the inputs are, by name; standard input included when it is a file (`< FILE`).
std::map<FileIdentity, std::string> named_input_identities(const RunConfig& config);
std::set<FileIdentity> input_identities(const RunConfig& config);

/// Refuses (exit status 2) a run that would write over one of its own inputs: an input that is
/// one of the files it writes in DIR, or its dead-letter file. The links --force `replaced`
/// (links_force_replaces()) are taken as absent.
Status check_inputs_are_not_outputs(const RunConfig& config,
                                    const std::set<std::string>& replaced = {});

/// Refuses (exit status 2) a --dead-letter file that is one of the files the run keeps in DIR:
/// a partition or worker file, the summary, or anything under DIR/.keyshard; or, with -o DIR,
/// the file standard error is (the dead-letter file is then an output synced and cut back on
/// resume); with -o -, the file standard output is. The links --force
/// `replaced` are taken as absent.
Status check_dead_letter_is_apart(const RunConfig& config,
                                  const std::set<std::string>& replaced = {});

/// Refuses (exit status 2) a --dead-letter file outside DIR that exists and holds bytes, which
/// the run would empty (`--dead-letter events.ndjson more.ndjson`, a slip that loses a data
/// file): unless --force, or the run continues an --incremental one (the file is its own). A
/// file in DIR is DIR's, which --force governs; standard error's file is appended to.
Status check_dead_letter_is_new(const RunConfig& config, bool continuing);

/// Refuses a run into DIR whose partition (or worker) files, or dead-letter file, would land on
/// something that is not a regular file: a FIFO, a directory, a device or a socket in its place
/// (a symbolic link is --force's to replace, or opening's to follow). Opening the file refuses
/// it so too (not_a_regular_output), but only once --force has removed the earlier run's
/// checkpoint and the outputs opened before it were emptied: this refuses it while everything
/// in DIR is as it was.
Status check_outputs_are_files(const RunConfig& config);

/// Whether `path` is where standard error writes, a regular file, a pipe or a socket
/// (`2> run.log`, then /dev/stderr or run.log itself; `2>&1 >out | next`, then /dev/stderr): dead
/// letters for it go through standard error, whole records in step with keyshard's messages,
/// never a new open that would truncate it, write over those messages or cut their lines.
bool is_standard_error_file(const std::string& path);

/// With --force, the symbolic links at the paths of the files this run writes in DIR (its
/// partition files, the summary, a dead-letter file in DIR), except one named as an input: the
/// run replaces them rather than writes through them, so the checks above take them as absent.
std::set<std::string> links_force_replaces(const RunConfig& config);

}  // namespace keyshard
