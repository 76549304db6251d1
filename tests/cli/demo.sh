#!/usr/bin/env bash
# `make demo` (samples/demo.sh), the README's first command, runs to its end every time, and
# each step shows what it says.
source "$(dirname "$0")/lib.sh"

# Under pipefail, a pipeline that `head` cuts short fails when its writer dies of SIGPIPE, which
# depends on timing (grep's output, read by `head -3`, once failed the demo under load). Only
# keyshard, which ends with status 0 when its reader goes away, may feed `head` there.
while IFS= read -r line; do
  [[ "$line" == '"$keyshard"'* ]] || fail "a command that may die of SIGPIPE feeds head: $line"
done < <(grep -E '^[^#]*\|[[:space:]]*head' "$SOURCE_DIR/samples/demo.sh" | grep -v '^step ')

for round in 1 2 3; do
  run_status env DEMO_DIR="$WORK/demo" bash "$SOURCE_DIR/samples/demo.sh" "$KEYSHARD"
  expect_eq "$STATUS" 0 "the demo, round $round: $ERR"
done
expect_eq "$(printf '%s\n' "$OUT" | grep -c '"account":"acc-0007"')" 3 "three acc-0007 events"
expect_contains "$OUT" '"reason":"' "the dead letters"
expect_contains "$OUT" "The outputs are in $WORK/demo." "the last line"
pass "the demo runs to its end"
