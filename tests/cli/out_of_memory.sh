#!/usr/bin/env bash
# Memory that runs out is a failure of the run, said as such, never a crash, and never a verdict
# on a line: simdjson's buffers for a window of lines cannot be allocated (the preloaded
# allocation failer refuses every `new (std::nothrow)` of 256 KiB or more), and a parser left
# half-allocated by that must not be used again (simdjson 3.0.1 would then write through its
# missing stage 2 stacks).
source "$(dirname "$0")/lib.sh"
: "${ALLOCATION_FAILER:?set ALLOCATION_FAILER to the allocation_failer library}"

"$GEN_EVENTS" --events 20000 --seed 5 > events.ndjson
# (A sanitizer's runtime asks to come first among the libraries; the preloaded one comes first.)
preload_asan_options="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
fail_large() {
  env FAIL_NOTHROW_NEW_FROM=$((256 << 10)) LD_PRELOAD="$ALLOCATION_FAILER" \
    ASAN_OPTIONS="$preload_asan_options" "$@"
}
for on_bad in dead-letter skip; do
  run_status fail_large "$KEYSHARD" split -q -k user_id -n 4 --on-bad "$on_bad" -o "oom-$on_bad" \
    events.ndjson
  expect_eq "$STATUS" 1 "--on-bad $on_bad: the exit status of a run out of memory (139: a crash)"
  expect_contains "$ERR" "keyshard: out of memory (is a limit such as ulimit -v lower" \
    "--on-bad $on_bad: the reason"
  [ -s "oom-$on_bad/dead-letter.ndjson" ] &&
    fail "--on-bad $on_bad: lines set aside as bad when memory ran out"
done
# Once memory is there, the run goes on from its checkpoint to the outputs of a run that never
# ran short.
ks resume -q oom-dead-letter
ks split -q -k user_id -n 4 -o reference events.ndjson
for f in reference/part-*.ndjson; do
  expect_same_file "oom-dead-letter/$(basename "$f")" "$f" "resumed after memory ran out"
done
pass "memory running out in the JSON parser is a failure of the run, not a crash or a bad line"
