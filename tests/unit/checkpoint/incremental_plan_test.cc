// The plan of an --incremental run. The hot-key decisions of an earlier run, renumbered to the
// inputs of the next: an input is the one the plan carries over from the checkpoint, not merely a
// file with the same inode (the file system may give a new file a deleted one's inode). And the
// rotations no run read, which a recycled inode must not hide.
#include "checkpoint/incremental_plan.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../temp_dir.h"
#include "checkpoint/rotated_files.h"
#include "input/input_position.h"
#include "util/files.h"

namespace keyshard {
namespace {

InputPosition recorded(const char* path, uint64_t inode, uint64_t offset) {
  InputPosition position;
  position.path = path;
  position.device = 7;
  position.inode = inode;
  position.size = offset;
  position.offset = offset;
  position.lines = offset / 10;
  position.head_hash = 0x1234 + inode;
  position.tail_hash = 0x5678 + offset;
  return position;
}

HotKeyDecision decided_in(uint32_t input) {
  return HotKeyDecision{std::string(1, 'X'), input, 100, 4, 10};
}

// The position at the end of the file `path`, which holds `bytes`, as a run that read it all
// records it.
InputPosition read_to_end(const std::string& path, const std::string& bytes) {
  const auto identity = identity_of(path);
  REQUIRE(identity);
  InputPosition position{path};
  position.device = identity->first;
  position.inode = identity->second;
  position.size = position.offset = bytes.size();
  FingerprintWindow window;
  window.add(bytes);
  position.head_hash = window.head_hash();
  position.tail_hash = window.tail_hash();
  return position;
}

}  // namespace

TEST_CASE("decisions follow their inputs to where the plan carries them") {
  Checkpoint previous;
  previous.inputs = {recorded("a.log", 1, 500), recorded("b.log", 2, 300)};
  std::vector<InputStart> plan;
  plan.push_back(InputStart{InputPosition{"new.log"}, false});  // a new file, from 0
  InputStart b{previous.inputs[1], true};
  b.position.path = "b.log.1";  // rotated: renamed since
  plan.push_back(b);
  plan.push_back(InputStart{previous.inputs[0], true});
  std::vector<HotKeyDecision> decisions = {decided_in(0), decided_in(1)};
  renumber_decision_inputs(previous, plan, decisions);
  CHECK(decisions[0].input == 2);
  CHECK(decisions[1].input == 1);
}

TEST_CASE("a new file with a deleted input's inode is not that input") {
  Checkpoint previous;
  previous.inputs = {recorded("app.log", 1, 500)};
  InputPosition fresh{"app.log"};  // the same inode, given to a new file: read from 0
  fresh.device = 7;
  fresh.inode = 1;
  std::vector<InputStart> plan = {InputStart{fresh, false}};
  std::vector<HotKeyDecision> decisions = {decided_in(0), decided_in(kEarlierInput)};
  renumber_decision_inputs(previous, plan, decisions);
  CHECK(decisions[0].input == kEarlierInput);
  CHECK(decisions[1].input == kEarlierInput);
}

TEST_CASE("a rotation in a recycled inode is still one no run read") {
  // The last run read app.log (now app.log.2, rotated twice since) and app.log.1 (since
  // deleted). The file in the middle, now app.log.1, was created with the inode of the deleted
  // one, as ext4 does when logrotate deletes the oldest rotation just before it creates the
  // new log.
  TempDir dir;
  const std::string second = "{\"user_id\":\"u2\"}\n";
  const std::string first = "{\"user_id\":\"u1\"}\n";  // as long as what the inode holds now
  const int64_t before = file_clock_ns() - 2'000'000'000;
  const std::string log = dir.write("app.log", "{\"user_id\":\"u4\"}\n");
  const std::string old_log = dir.write("app.log.2", second);
  const std::string middle = dir.write("app.log.1", "{\"user_id\":\"u3\"}\n");
  Checkpoint previous;
  previous.complete = true;
  previous.inputs = {read_to_end(old_log, second), read_to_end(middle, first)};
  previous.inputs[0].path = log;     // where the last run read it
  previous.inputs[1].path = middle;  // its bytes then: `first`, not what the inode holds now
  std::vector<std::string> warnings;
  const auto plan = plan_incremental(
      previous, {log}, [&](const std::string& text) { warnings.push_back(text); }, before);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].starts_with(middle + ": changed since the last run and read by none"));

  SUBCASE("the very file the last run read is no rotation missed") {
    previous.inputs[1] = read_to_end(middle, "{\"user_id\":\"u3\"}\n");
    warnings.clear();
    (void)plan_incremental(previous, {log},
                           [&](const std::string& text) { warnings.push_back(text); }, before);
    CHECK(warnings.empty());
  }
  SUBCASE("a record at offset 0 has no bytes to vouch for the file with its inode") {
    previous.inputs[1] = read_to_end(middle, "");
    warnings.clear();
    (void)plan_incremental(previous, {log},
                           [&](const std::string& text) { warnings.push_back(text); }, before);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].starts_with(middle + ": changed since the last run and read by none"));
  }
}

}  // namespace keyshard
