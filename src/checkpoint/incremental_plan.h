// Where each input of an --incremental run starts, from the last run's checkpoint: a file seen
// before continues from its recorded offset (the reader checks its fingerprints and reads it
// again from 0, with a warning, if it was truncated or rewritten); a file whose path now names
// another inode was rotated, so the old inode, found again in the same directory by device,
// inode and fingerprints, is finished first; a new file starts at 0. A file is known by device
// and inode: another spelling of its path continues it, a file named twice is read once, and the
// positions of files not named this time are carried over (first in the plan, marked `carried`
// and finished) while their names still lead to the same files.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "input/chunk_reader.h"

namespace keyshard {

/// `previous_seen`: when the last run looked at its inputs (file_clock_ns() then; 0:
/// unknown). A rotated file whose directory holds files named like its rotations and changed
/// since then, none of them read by any run, gets a warning naming them: rotated twice since,
/// the file in the middle was never the one at the path when a run looked.
std::vector<InputStart> plan_incremental(const Checkpoint& previous,
                                         const std::vector<std::string>& paths,
                                         const std::function<void(const std::string&)>& warn,
                                         int64_t previous_seen = 0);

/// The hot-key `decisions` of the last run, their inputs renumbered from `previous`'s to the
/// `plan`'s (the position the plan carries over from `previous`); one no longer in the plan is
/// kEarlierInput.
void renumber_decision_inputs(const Checkpoint& previous, const std::vector<InputStart>& plan,
                              std::vector<HotKeyDecision>& decisions);

/// The inputs of a first --incremental run (no checkpoint yet): each from 0, and, as in every
/// later run, a file named twice (another spelling, a link) is read once, with a warning.
std::vector<InputStart> plan_first_incremental(
    const std::vector<std::string>& paths, const std::function<void(const std::string&)>& warn);

/// Whether the regular file at `path` holds the bytes `position` fingerprints before its
/// offset (plain files only; false for a compressed file or one too short).
bool holds_position(const std::string& path, const InputPosition& position);

}  // namespace keyshard
