// The checkpointer's syncs ahead of a checkpoint: they make the outputs durable from the writer
// thread without writing a checkpoint, only under --commit sync, and a failed one stops the run.
#include "checkpoint/checkpointer.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "unit/temp_dir.h"

namespace keyshard {
namespace {

Checkpoint one_partition() {
  Checkpoint base;
  base.stats = RunStats(1);
  return base;
}

}  // namespace

TEST_CASE("a sync ahead makes the outputs durable without writing a checkpoint") {
  TempDir dir;
  std::optional<Status> failure;
  Checkpointer checkpointer(dir.path(), one_partition(), 1, false, {dir.path()},
                            [&](Status status) { failure = std::move(status); });
  checkpointer.start();
  checkpointer.sync_ahead();
  REQUIRE(checkpointer.finish().ok());  // (a sync asked for before the stop still runs)
  CHECK(checkpointer.synced_ahead() == 1);
  CHECK(checkpointer.written() == 0);
  CHECK(std::filesystem::is_empty(dir.path()));
  CHECK(!failure);
}

TEST_CASE("syncs asked for while one waits are made once") {
  TempDir dir;
  Checkpointer checkpointer(dir.path(), one_partition(), 1, false, {dir.path()}, [](Status) {});
  checkpointer.sync_ahead();  // before the writer thread starts: all three wait
  checkpointer.sync_ahead();
  checkpointer.sync_ahead();
  checkpointer.start();
  REQUIRE(checkpointer.finish().ok());
  CHECK(checkpointer.synced_ahead() == 1);
}

TEST_CASE("without --commit sync there is nothing to sync ahead") {
  TempDir dir;
  Checkpointer checkpointer(dir.path(), one_partition(), 1, false, {}, [](Status) {});
  checkpointer.start();
  checkpointer.sync_ahead();
  REQUIRE(checkpointer.finish().ok());
  CHECK(checkpointer.synced_ahead() == 0);
}

TEST_CASE("a sync ahead that fails stops the run, naming what it could not sync") {
  TempDir dir;
  const std::string missing = dir.path() + "/dead-letters/gone.ndjson";
  std::optional<Status> failure;
  Checkpointer checkpointer(dir.path(), one_partition(), 1, false, {dir.path(), missing},
                            [&](Status status) { failure = std::move(status); });
  checkpointer.start();
  checkpointer.sync_ahead();
  const Status finished = checkpointer.finish();
  CHECK(!finished.ok());
  REQUIRE(failure.has_value());
  CHECK(!failure->ok());
  CHECK(failure->where() == missing);
  CHECK(checkpointer.synced_ahead() == 0);
}

}  // namespace keyshard
