// Opening the inputs in turn, for the reader stage: each is opened when the one before it is
// read to its end, and put at its starting position (a checkpoint's or an --incremental run's),
// with the bytes before that position checked against the ones recorded.
#include <sys/stat.h>

#include <cerrno>

#include "input/chunk_reader.h"
#include "input/input_source.h"
#include "util/interrupt.h"
#include "util/number_text.h"

namespace keyshard {

// Skips to the recorded offset (seeking when it can, else reading through) and checks that the
// bytes before it are the ones recorded.
Status ChunkReader::position_input(InputStart& start) {
  InputPosition& recorded = start.position;
  window_.reset();
  if (recorded.offset == 0) return {};
  std::string problem;
  // A file is known by its device and inode; stdin only by its bytes (the same stream may come
  // from a file one time and from a pipe the next).
  if (recorded.device != 0 && recorded.path != "-" &&
      (source_->device != recorded.device || source_->inode != recorded.inode)) {
    problem = "it is another file now (its device or inode changed)";
  } else {
    bool reached = false;
    if (Status status = skip_to(*source_, recorded.offset, window_, reached); !status) {
      return status;
    }
    if (!reached) {
      problem = "it is shorter than the recorded position (" + with_commas(recorded.offset) +
                " bytes)";
    }
  }
  if (problem.empty() && (window_.head_hash() != recorded.head_hash ||
                          window_.tail_hash() != recorded.tail_hash)) {
    problem = "its bytes before the recorded position differ";
  }
  if (problem.empty()) {
    if (warn_ && recorded.device != 0 && source_->file_size < recorded.size) {
      // Its bytes before the position are the ones read, but some after it, which the run was
      // to read, are gone: not an error of the run's, yet its outputs will lack them.
      warn_(source_->name() + ": it holds " + with_commas(source_->file_size) +
            " bytes, fewer than the " + with_commas(recorded.size) +
            " it held when the run read it: it was cut short since; this run reads it to its "
            "end as it is now");
    }
    return {};
  }
  if (!start.restart_if_changed) {
    return Status::error("changed since the checkpoint: " + problem, source_->name())
        .because(Cause::kInputChanged);
  }
  if (warn_) {
    warn_(source_->name() + ": " + problem + "; reading it again from the start (lines the " +
          "earlier file gained after the last run, if any, are not read)");
  }
  const bool may_grow = source_->may_grow;  // (the same input, opened again)
  if (Status status = open_input(recorded.path, source_); !status) return status;
  source_->may_grow = may_grow;
  recorded.offset = 0;
  recorded.lines = 0;
  restarted_ = true;
  read_again_ = true;
  window_.reset();
  return {};
}

bool ChunkReader::next_unfinished() {
  while (next_path_ < starts_.size() && starts_[next_path_].finished) ++next_path_;
  return next_path_ < starts_.size();
}

Status ChunkReader::open_first() {
  if (opened_ || !next_unfinished()) return {};
  Status status = open_next_input();
  if (!status && (corrupt_frame_ || interrupt_signal() != 0)) {
    // Left for next() to report, as the run judges it there: a damaged frame by the checkpoint
    // over it, a read cut short by a signal as the run's interruption.
    pending_error_ = std::move(status);
    return {};
  }
  return status;
}

Status ChunkReader::open_next_input() {
  if (positioned_) {  // the input just finished keeps its fingerprints
    positions_[input_index_].head_hash = window_.head_hash();
    positions_[input_index_].tail_hash = window_.tail_hash();
  }
  InputStart& start = starts_[next_path_++];
  Status status = open_input(start.position.path, source_);
  if (!status && start.restart_if_changed) {
    // An --incremental input gone since the run was planned: most likely between a rotation's
    // rename and its new file. As when it is missing at the plan, its position is kept, and the
    // next run finishes the file planned (under its new name) before it reads the new file.
    struct stat info {};
    if (::stat(start.position.path.c_str(), &info) != 0 && errno == ENOENT) {
      enter_input(start.position.path);
      if (warn_) {
        warn_(start.position.path + ": gone since this run started (rotated?); the next "
                                    "--incremental run reads it where it is found then");
      }
      source_.reset();
      return {};
    }
    status = open_input(start.position.path, source_);  // (there again: a rotation's new file)
  }
  if (!status) return status;
  // (Only files that may still grow: not a rotated file being finished.)
  source_->may_grow = hold_unterminated_ && start.restart_if_changed;
  enter_input(source_->name());
  const InputPosition& planned = start.position;
  if (start.restart_if_changed && planned.device != 0 &&
      source_->device != 0 &&  // (a regular file)
      (source_->device != planned.device || source_->inode != planned.inode)) {
    // An --incremental input rotated after the run was planned, before its turn (the plan
    // records the identity of the file it found, read from its start or from a position): its
    // position stays that of the file planned, so that the next run finishes that one (under
    // its new name) before it reads the new file.
    if (warn_) {
      warn_(source_->name() + ": rotated since this run started; the next --incremental run "
                              "reads the rotated file, then this one");
    }
    source_.reset();
    return {};
  }
  if (status = position_input(start); !status) {
    // A damaged frame met on the way to the recorded position: the run that read up to there
    // may have handed on lines of it (one that stopped at the frame's end, before its checksum
    // had been written or read).
    note_corrupt_frame();
    return status;
  }
  positioned_ = true;
  InputPosition& position = positions_[input_index_];
  position = start.position;
  position.device = source_->device;
  position.inode = source_->inode;
  position.size = source_->file_size;
  position.compressed = source_->compressed();
  input_offset_ = position.offset;
  source_done_ = false;
  return {};
}

void ChunkReader::enter_input(std::string name) {
  input_index_ = static_cast<uint32_t>(next_path_ - 1);
  opened_ = true;
  positioned_ = false;
  read_again_ = false;
  names_.push_back(std::move(name));
}

}  // namespace keyshard
