// The hot-key decisions of an earlier --incremental run, renumbered to the inputs of the next:
// an input is the one the plan carries over from the checkpoint, not merely a file with the same
// inode (the file system may give a new file a deleted one's inode).
#include "checkpoint/incremental_plan.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

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

}  // namespace keyshard
