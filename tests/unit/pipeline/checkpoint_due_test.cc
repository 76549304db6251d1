// When the reader marks a chunk as the end of a checkpoint interval (run_config.h): by size, by
// time, and under --checkpoint-every auto by size no sooner than kAutoCheckpointSeconds after the
// last checkpoint; and when it has the outputs synced between checkpoints.
#include <doctest/doctest.h>

#include "cli/option_values.h"
#include "pipeline/run_config.h"

namespace keyshard {
namespace {

constexpr uint64_t kMiB = 1 << 20;

TEST_CASE("a size given: due once that much input is read, however soon") {
  RunConfig config;
  config.checkpoint_every_bytes = 64 * kMiB;
  CHECK_FALSE(checkpoint_due(config, 64 * kMiB - 1, 100.0, false));
  CHECK(checkpoint_due(config, 64 * kMiB, 0.0, false));
  CHECK(checkpoint_due(config, 65 * kMiB, 0.001, false));
}

TEST_CASE("auto: by size, and no sooner than half a second after the last checkpoint") {
  RunConfig config;
  config.checkpoint_every_bytes = 64 * kMiB;
  config.checkpoint_least_seconds = kAutoCheckpointSeconds;
  CHECK(kAutoCheckpointSeconds == 0.5);
  CHECK_FALSE(checkpoint_due(config, 64 * kMiB, 0.1, false));  // a fast run: not yet
  CHECK_FALSE(checkpoint_due(config, 600 * kMiB, 0.49, false));
  CHECK(checkpoint_due(config, 600 * kMiB, 0.5, false));  // then at the next chunk
  CHECK(checkpoint_due(config, 64 * kMiB, 30.0, false));  // a slow one: every 64 MiB
  CHECK_FALSE(checkpoint_due(config, 64 * kMiB - 1, 30.0, false));
  // A pipe gone quiet may send nothing more for long: what is due by size is taken at once.
  CHECK(checkpoint_due(config, 64 * kMiB, 0.1, true));
  CHECK_FALSE(checkpoint_due(config, 64 * kMiB - 1, 0.1, true));
}

TEST_CASE("a time given: due once that long has gone by, whatever was read") {
  RunConfig config;
  config.checkpoint_every_bytes = 0;
  config.checkpoint_every_seconds = 30;
  CHECK_FALSE(checkpoint_due(config, 1 << 30, 29.9, false));
  CHECK(checkpoint_due(config, 0, 30.0, false));
}

TEST_CASE("--checkpoint-every: only auto waits for the least time") {
  RunConfig config;
  config.partitions = 8;
  REQUIRE(parse_checkpoint_every("auto", config));
  CHECK(config.checkpoint_every_bytes == 64 * kMiB);
  CHECK(config.checkpoint_least_seconds == kAutoCheckpointSeconds);
  REQUIRE(parse_checkpoint_every("64MiB", config));
  CHECK(config.checkpoint_every_bytes == 64 * kMiB);
  CHECK(config.checkpoint_least_seconds == 0);
  REQUIRE(parse_checkpoint_every("5m", config));
  CHECK(config.checkpoint_every_seconds == 300);
  CHECK(config.checkpoint_every_bytes == 0);
  CHECK(config.checkpoint_least_seconds == 0);
}

TEST_CASE("syncs ahead: every sync_ahead_bytes() between checkpoints further apart, none under auto") {
  RunConfig config;
  config.partitions = 8;
  REQUIRE(parse_checkpoint_every("off", config));
  CHECK_FALSE(sync_ahead_due(config, 64 * kMiB - 1));
  CHECK(sync_ahead_due(config, 64 * kMiB));
  REQUIRE(parse_checkpoint_every("5m", config));
  CHECK(sync_ahead_due(config, 64 * kMiB));
  REQUIRE(parse_checkpoint_every("1GiB", config));
  CHECK(sync_ahead_due(config, 64 * kMiB));
  config.partitions = 1024;  // 256 KiB a partition, up to 256 MiB
  CHECK_FALSE(sync_ahead_due(config, 255 * kMiB));
  CHECK(sync_ahead_due(config, 256 * kMiB));
  // auto: its checkpoints come after that much input already (or half a second apart).
  REQUIRE(parse_checkpoint_every("auto", config));
  CHECK_FALSE(sync_ahead_due(config, 256 * kMiB));
  CHECK_FALSE(sync_ahead_due(config, uint64_t{1} << 40));
}

TEST_CASE("off: never due during the run") {
  RunConfig config;
  config.checkpoint_every_bytes = 0;
  CHECK_FALSE(checkpoint_due(config, uint64_t{1} << 40, 1e6, false));
}

}  // namespace
}  // namespace keyshard
