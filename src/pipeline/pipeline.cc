// The driver: opens the inputs and each worker's outputs, starts the workers, the checkpointer
// and the progress line, reads the inputs into chunks for the scheduler (scheduler.h: who
// routes and who applies which chunk), and gathers the run's counts at the end.
#include "pipeline/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <new>
#include <optional>
#include <system_error>
#include <thread>

#include "input/chunk_reader.h"
#include "input/input_source.h"
#include "insight/progress.h"
#include "pipeline/interrupt_notice.h"
#include "pipeline/partition_owner.h"
#include "pipeline/router.h"
#include "pipeline/salt_sequencer.h"
#include "pipeline/scheduler.h"
#include "sinks/exec_collector.h"
#include "util/durable_files.h"
#include "util/elapsed.h"
#include "util/interrupt.h"
#include "util/thread_priority.h"

namespace keyshard {
RunResult run_pipeline(const RunConfig& config, const RunStart* start) {
  const auto started = SteadyClock::now();
  const unsigned workers = std::max(1u, config.threads);
  RunResult result;
  result.stats = RunStats(config.partitions);
  const Checkpoint* resume = start ? start->resume : nullptr;
  std::unique_ptr<SaltSequencer> sequencer;
  if (config.sequenced_salting()) {
    sequencer = std::make_unique<SaltSequencer>(config);
    if (resume) sequencer->restore(resume->salt);
  }
  std::unique_ptr<Checkpointer> checkpointer;
  std::vector<std::string> sync_paths;  // what --commit sync makes durable (see make_durable)
  Scheduler* stop_on_failure = nullptr;  // set below, before the checkpointer's thread starts
  if (config.checkpoints && start) {
    Checkpoint base;
    base.options = start->options;
    base.incremental = config.incremental;
    base.exec = config.exec();
    base.carried = static_cast<uint32_t>(config.carried_inputs);
    std::error_code unknown;  // then resume stays where it is started
    base.working_directory = std::filesystem::current_path(unknown).string();
    base.inputs_seen_ns = start->inputs_seen_ns;
    base.run_base = start->run_base;
    base.stats = RunStats(config.partitions);
    if (config.commit_sync && !config.exec()) {  // the output files, then DIR for their entries
      for (uint32_t p = 0; p < config.partitions; ++p) {
        sync_paths.push_back(config.output_dir + "/" + partition_file_name(config, p));
      }
      if (config.on_bad == BadLinePolicy::kDeadLetter && !config.dead_letter_path.empty()) {
        sync_paths.push_back(config.dead_letter_path);
      }
      sync_paths.push_back(config.output_dir);
    }
    checkpointer = std::make_unique<Checkpointer>(
        config.output_dir, std::move(base), workers, sequencer != nullptr, sync_paths,
        [&stop_on_failure](Status status) { stop_on_failure->abort(std::move(status)); });
  }
  Scheduler scheduler(workers, sequencer.get(), checkpointer.get());
  stop_on_failure = &scheduler;
  // A thread that cannot be started (ulimit -u, a container's limit of tasks) stops the run as
  // any failure does: the threads started stop at once, as the reader gets no chunk.
  auto cannot_start = [&scheduler](const std::string& what, const std::system_error& error) {
    scheduler.abort(Status::error(fmt::format(
        "cannot start {}: {} (the limit of processes and threads, ulimit -u, or of memory, "
        "ulimit -v, is reached: use a smaller -j, or raise the limit)",
        what, error.code().message())));
  };
  std::vector<uint64_t> input_lines;
  if (start) {
    for (const InputStart& input : start->inputs) input_lines.push_back(input.position.lines);
  }
  const uint64_t bytes_before = resume ? resume->stats.bytes_read : 0;

  // With --exec, one thread collects what the children print.
  std::unique_ptr<ExecCollector> collector;
  if (config.exec()) {
    collector = std::make_unique<ExecCollector>(
        config.max_line_size, [&scheduler](Status status) { scheduler.abort(std::move(status)); });
  }
  std::vector<std::unique_ptr<PartitionOwner>> owners;
  auto failed_to_open = [&](Status status) {
    result.status = std::move(status);
    // Children started before one that could not be are ended below, by closing their input;
    // the collector drains what they print meanwhile, so that none blocks on a full pipe while
    // keyshard waits for it to exit. Without a thread for it (the limit of processes that
    // stopped a child stops a thread too), the pipes are closed unread instead.
    try {
      if (collector) collector->start();
    } catch (const std::system_error&) {
      collector->discard();
    }
    // No event was written: what this run created goes, so that a retry needs no --force.
    for (const auto& owner : owners) owner->remove_created_files();
    owners.clear();  // closes the children's input, so that they end
    if (collector) (void)collector->join();
    return result;
  };
  ChunkReader reader = start ? ChunkReader(start->inputs, config.chunk_size, config.max_line_size,
                                           config.incremental, print_warning)
                             : ChunkReader(config.inputs, config.chunk_size, config.max_line_size,
                                           print_warning);
  try {
    for (unsigned w = 0; w < workers; ++w) {
      owners.push_back(std::make_unique<PartitionOwner>(config, w, workers, resume, input_lines));
      if (Status status = owners.back()->open(collector.get()); !status) {
        return failed_to_open(std::move(status));
      }
    }
    // --exec starts no child before the input it goes on with passed its checks (a resumed
    // run's: its recorded position, the bytes before it): children started for a run refused
    // then would read an empty input, and what they print on one would go into the outputs.
    if (config.exec()) {
      if (Status status = reader.open_first(); !status) return failed_to_open(std::move(status));
    }
    // A resumed run cuts its outputs back to the checkpoint, and --exec starts its children,
    // only now that every output passed its checks: a run refused over one output changes none.
    // (Without --exec, an input is checked as it is read, after this: one found changed is
    // refused once the outputs are cut, which loses nothing, as the bytes cut are the run's
    // own, written again by the resume that goes on.)
    for (const auto& owner : owners) {
      if (Status status = owner->start_outputs(); !status) {
        return failed_to_open(std::move(status));
      }
    }
  } catch (const std::bad_alloc&) {  // (the outputs' buffers, say, under ulimit -v)
    return failed_to_open(out_of_memory());
  }
  try {
    if (collector) collector->start();
  } catch (const std::system_error& error) {
    cannot_start("the thread that collects the children's output", error);
  }

  // Routers outlive every worker: a bad line's detail text may point into the router that
  // found it, and another worker's owner may still be writing that line's dead letter.
  std::vector<std::unique_ptr<Router>> routers;
  ProgressCounters progress;
  std::unique_ptr<ProgressLine> progress_line;
  if (config.progress) {
    const std::vector<std::string> read(  // not the inputs only carried over
        config.inputs.begin() + static_cast<std::ptrdiff_t>(config.carried_inputs),
        config.inputs.end());
    uint64_t start_bytes = 0;  // read before this process started (a resumed run)
    for (size_t i = config.carried_inputs; start && i < start->inputs.size(); ++i) {
      start_bytes += start->inputs[i].position.offset;
    }
    progress_line = std::make_unique<ProgressLine>(progress, known_input_size(read), start_bytes);
  }
  for (unsigned w = 0; w < workers; ++w) {
    routers.push_back(std::make_unique<Router>(config, &progress));
  }

  // The heaviest keys: each checkpoint records the summary of the events before its cut, and a
  // resumed run starts from it.
  HeavyHitters settled(kHeavyHitterCounters);
  if (resume) settled = resume->stats.heavy_hitters;
  std::mutex settled_mutex;
  auto settle = [&](uint32_t through) {
    std::lock_guard lock(settled_mutex);
    for (const auto& router : routers) router->take_heavy_hitters(through, settled);
    return settled;
  };
  if (checkpointer) checkpointer->settle_heavy_hitters_with(settle);

  std::vector<Status> finish_status(workers);
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w) {
    try {
      threads.emplace_back([&, w] {
        try {
          name_this_thread(fmt::format("ks-worker-{}", w));
        } catch (const std::bad_alloc&) {  // (only a name for tools such as top)
        }
        lower_this_thread_priority(kWorkerNiceSteps);  // the reader must not wait for a core
        scheduler.work(w, *routers[w], *owners[w]);
        try {
          finish_status[w] = owners[w]->finish();
        } catch (const std::bad_alloc&) {
          finish_status[w] = out_of_memory();
        }
      });
    } catch (const std::system_error& error) {
      cannot_start(fmt::format("worker thread {} of {}", w + 1, workers), error);
      break;
    }
  }

  // A child that fails while the stream is quiet is seen within a second (see ExecSink).
  if (config.exec()) reader.look_in_while_quiet(std::chrono::seconds(1));
  uint32_t interval = 0;  // checkpoints taken so far (see Chunk::interval)
  auto reader_cut = [&] {
    ReaderCut cut;
    cut.inputs = reader.positions(cut.current);
    cut.bytes_read = bytes_before + reader.bytes_delivered();
    cut.interval = interval;
    return cut;
  };
  // A cut of the whole run as it stands (no chunk in flight): at its start and at its end.
  auto whole_cut = [&] {
    std::vector<OwnerCut> cuts;
    for (const auto& owner : owners) cuts.push_back(owner->final_cut());
    return checkpointer->assemble(
        reader_cut(), std::move(cuts),
        sequencer ? std::optional<SaltState>(sequencer->snapshot()) : std::nullopt,
        settle(UINT32_MAX));
  };
  if (checkpointer && (!resume || resume->complete)) {
    // A fresh run records its empty start, so that `resume` works from its first byte. So does
    // an --incremental run that goes on from a finished one, before it writes a byte: the
    // checkpoint then no longer says finished, and bytes after its recorded sizes are this
    // run's (cut on resume), whereas after a finished run they would be someone else's.
    // (Not exec_settled: no child has been fed yet, but this checkpoint stays the last one until
    // the next is written, and a crash before that may cut a child's input mid-line.)
    try {
      result.status = checkpointer->write(whole_cut());
    } catch (const std::bad_alloc&) {  // (the workers are started: the run ends in order)
      result.status = out_of_memory();
    }
    if (!result.status) scheduler.abort(result.status);
  } else if (checkpointer && resume->exec_settled) {
    // A resume from an orderly stop (^C) of an --exec run: the children are fed again from
    // here, so the checkpoint no longer says that none is mid-stream.
    try {
      Checkpoint unsettled = *resume;
      unsettled.exec_settled = false;
      result.status = checkpointer->write(unsettled);
    } catch (const std::bad_alloc&) {
      result.status = out_of_memory();
    }
    if (!result.status) scheduler.abort(result.status);
  }
  std::optional<InterruptNotice> interrupt_notice;
  try {
    if (checkpointer && scheduler.error().ok()) checkpointer->start();
    if (config.exec()) interrupt_notice.emplace();
  } catch (const std::system_error& error) {
    cannot_start("a thread", error);
  }

  Status read_status;
  double read_seconds = 0;
  uint64_t chunks = 0;
  uint64_t chunks_in_place = 0;
  uint64_t since_checkpoint = 0;
  uint64_t since_sync = 0;  // bytes read since the outputs were last synced (or asked to be)
  auto last_checkpoint = SteadyClock::now();
  // Per input, how far the checkpoints this run took while reading it reach (in the bytes this
  // run reads: an input read again from 0 counts from there).
  std::vector<uint64_t> covered(config.inputs.size(), 0);
  // The signal that stopped the reading; one that comes once the input is read stops nothing,
  // nor one that comes before a read error is reported (it may be a damaged frame's).
  int stopped_by = 0;
  while (Chunk* chunk = scheduler.acquire()) {
    if (interrupt_signal() != 0 && !reader.at_end() && !reader.error_pending()) {
      stopped_by = interrupt_signal();
      scheduler.release_unused(chunk);
      break;
    }
    const auto read_started = SteadyClock::now();
    bool more = false;
    bool memory_ran_out = false;
    try {
      more = reader.next(*chunk, read_status);
    } catch (const std::bad_alloc&) {  // (a long line's chunk, say) the lines before it count
      read_status = out_of_memory();
      memory_ran_out = true;
    }
    read_seconds += seconds_since(read_started);
    if (!more) {
      scheduler.release_unused(chunk);
      if (!read_status.ok() && !memory_ran_out && !reader.corrupt_frame() &&
          interrupt_signal() != 0) {
        read_status = {};  // a read cut short
        stopped_by = interrupt_signal();
      }
      break;
    }
    ++chunks;
    if (chunk->view != nullptr) ++chunks_in_place;
    // (The last chunk may wait long to be handed on, behind slow --exec children.)
    if (interrupt_notice && reader.at_end()) interrupt_notice->reading_over(true);
    progress.bytes.store(reader.bytes_read(), std::memory_order_relaxed);
    chunk->checkpoint_after = false;
    if (checkpointer) {
      since_checkpoint += chunk->size;
      since_sync += chunk->size;
      if (checkpoint_due(config, since_checkpoint, seconds_since(last_checkpoint),
                         chunk->flush_after)) {
        chunk->checkpoint_after = true;
        since_checkpoint = 0;
        since_sync = 0;
        last_checkpoint = SteadyClock::now();
        ReaderCut cut = reader_cut();
        if (cut.current < cut.inputs.size()) {
          covered[cut.current] = std::max(covered[cut.current], cut.inputs[cut.current].offset);
        }
        checkpointer->expect(chunk->sequence, std::move(cut));
      } else if (sync_ahead_due(config, since_sync)) {
        // (What the owners have written by now: the chunks before this one, give or take.)
        since_sync = 0;
        checkpointer->sync_ahead();
      }
    }
    chunk->interval = interval;
    if (chunk->checkpoint_after) ++interval;
    scheduler.publish(chunk);
  }
  result.interrupted = stopped_by;
  if (interrupt_notice) interrupt_notice->reading_over(stopped_by == 0 && reader.at_end());
  scheduler.end_of_input();
  for (std::thread& thread : threads) thread.join();
  // The owners of workers that could not start were given nothing: they finish here, so that
  // their --exec children see the end of their input (and the collector the end of theirs).
  for (size_t w = threads.size(); w < workers; ++w) {
    try {
      finish_status[w] = owners[w]->finish();
    } catch (const std::bad_alloc&) {
      finish_status[w] = out_of_memory();
    }
  }
  // Every chunk is done with: its memory goes before the last of the run's work, which, when
  // memory ran out, then has room.
  scheduler.release_chunks();
  if (collector) (void)collector->join();  // its failures reached the scheduler
  if (interrupt_notice) interrupt_notice->stop();
  // A signal once every chunk was read: the run ended anyway (the caller says so).
  if (result.interrupted == 0) result.interrupted_late = interrupt_signal();
  if (checkpointer) (void)checkpointer->finish();  // likewise
  if (progress_line) progress_line->stop();  // cleared before the summary

  // What the report reads to tell a run that processed nothing (which it may then undo), set
  // before anything below can fail.
  result.wrote_checkpoint = checkpointer && checkpointer->written() > 0;
  result.fresh = start != nullptr && resume == nullptr && !config.incremental;
  result.stats.stage_times = scheduler.times();
  result.stats.stage_times.read = read_seconds;
  result.stats.stage_times.chunks = chunks;
  result.stats.stage_times.chunks_in_place = chunks_in_place;
  // The earliest failure wins: a write error or bad line stops the run before later input
  // matters; a read error comes after every chunk read before it was written.
  result.status = scheduler.error();
  // (Memory that runs out even now, with the chunks freed, fails the run as it would have
  // failed during it: no last checkpoint, the first failure kept.)
  try {
    if (result.status.ok() && !read_status.ok() && reader.failed_line()) {
      // Every line before it was applied: the owners' line counts give its number (they restart
      // with the first chunk of an input read again from 0).
      const auto [input, first_after_restart] = *reader.failed_line();
      const uint64_t before = first_after_restart ? 0 : owners[0]->lines_of_input(input);
      result.status = Status::error(read_status.reason(),
                                    fmt::format("{}:{}", read_status.where(), before + 1))
                          .because(read_status.cause());
    } else if (result.status.ok()) {
      result.status = read_status;
    }
    // (Also when another failure stopped the run first: a bad line decoded from the damage.)
    if (const auto& frame = reader.corrupt_frame(); frame) {
      // Lines of the frame were handed on unchecked: a checkpoint of this run's taken past its
      // start covers some, and so does the position an earlier run's checkpoint gave this run
      // to start from, unless the input was read again from 0 (that position was in bytes since
      // gone).
      const uint64_t given =
          start != nullptr && frame->input < start->inputs.size() && !frame->restarted
              ? start->inputs[frame->input].position.offset
              : 0;
      const uint64_t taken = frame->input < covered.size() ? covered[frame->input] : 0;
      result.corrupt_frame_covered = taken > frame->start || given > frame->start;
      if (frame->input < config.input_names.size()) {
        result.corrupt_frame_input = config.input_names[frame->input];
      }
    }
    for (unsigned w = 0; w < workers; ++w) {
      if (result.status.ok() && !finish_status[w].ok()) result.status = finish_status[w];
      result.stats.merge(owners[w]->stats());
      const std::vector<std::string>& created = owners[w]->created_files();
      result.created_files.insert(result.created_files.end(), created.begin(), created.end());
    }
    if (checkpointer && result.status.ok()) {
      result.status = make_durable(sync_paths);  // (--commit sync) before the last checkpoint
    }
    if (checkpointer && result.status.ok()) {
      // The last cut: everything read is written (and synced). An interrupted run resumes here;
      // a finished one is complete (and an --incremental run continues from here next time).
      Checkpoint last = whole_cut();
      last.complete = result.interrupted == 0;
      last.exec_settled = config.exec();  // every child has ended its output itself
      result.last_checkpoint = std::move(last);
    }
    result.stats.heavy_hitters = settle(UINT32_MAX);
    if (sequencer) result.stats.hot_key_decisions = sequencer->decisions();
    if (checkpointer) {
      result.stats.stage_times.checkpoints = checkpointer->written();
      result.stats.stage_times.syncs_ahead = checkpointer->synced_ahead();
    }
    result.stats.bytes_read = bytes_before + reader.bytes_delivered();
    result.stats.bytes_read_now = reader.bytes_delivered();
    result.stats.inputs = config.input_names;
    result.stats.first_shown_input = config.carried_inputs;
  } catch (const std::bad_alloc&) {
    if (result.status.ok()) result.status = out_of_memory();
    result.last_checkpoint.reset();
    result.fresh = false;  // (never undone for it: it may have written everything)
  }
  result.stats.elapsed_seconds = seconds_since(started);
  return result;
}

}  // namespace keyshard
