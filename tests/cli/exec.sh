#!/usr/bin/env bash
# --exec: a child per partition fed its events in order; its stdout is the partition's output.
source "$(dirname "$0")/lib.sh"

"$GEN_EVENTS" --events 100000 --seed 11 > events.ndjson

# cat as the child gives exactly the outputs of a plain split.
ks split -k user_id -n 8 -o plain -q events.ndjson
ks split -k user_id -n 8 -o viacat -q --exec cat events.ndjson
for f in plain/part-*.ndjson; do expect_same_file "viacat/$(basename "$f")" "$f" "--exec cat"; done
# Compressed in the command: the child writes the file (what --compress is refused for, below).
ks split -k user_id -n 8 -o packed -q --exec 'cat | zstd -q -1' \
  --name 'part-{partition:05}.ndjson.zst' events.ndjson
for f in plain/part-*.ndjson; do
  zstd -q -dc "packed/$(basename "$f").zst" > unpacked.ndjson
  expect_same_file unpacked.ndjson "$f" "--exec 'cat | zstd'"
done
pass "--exec cat equals split"

# The environment tells each child who it is; its stderr comes back prefixed.
run_status ks split -k user_id -n 3 -o - -q \
  --exec 'echo "$KEYSHARD_PARTITION/$KEYSHARD_PARTITIONS/$KEYSHARD_HASH" >&2; cat >/dev/null' \
  events.ndjson
expect_eq "$STATUS" 0 "status"
expect_eq "$(echo "$ERR" | sort)" $'[partition 0] 0/3/murmur2\n[partition 1] 1/3/murmur2\n[partition 2] 2/3/murmur2' "child environment and stderr prefix"
pass "environment and stderr"

# At the end every child's input is ended before any is waited for, so that children that take
# long to wind down do so side by side: 8 children, 2 workers, each 2 s after its end of input.
# (One after the other, a worker's four children saw their ends 2 s apart.)
run_status ks split -k user_id -n 8 -j 2 -o winding -q \
  --exec 'cat >/dev/null; date +%s.%N > "$PWD/eof.$KEYSHARD_PARTITION"; sleep 2' events.ndjson
expect_eq "$STATUS" 0 "children that wind down slowly"
python3 -c "
import glob
times = [float(open(f).read()) for f in glob.glob('eof.*')]
assert len(times) == 8 and max(times) - min(times) < 1.5, sorted(times)" \
  || fail "every child's input ends before any child is waited for"
pass "children wind down side by side"

# What --exec does not do is said: {partition} is --name's, not the command's (the children
# would all write one file); --name with --exec-per worker names nothing; a blank command is
# none.
head -n 100 events.ndjson > few.ndjson
run_status ks split -k user_id -n 2 -q --exec 'cat > /dev/null # {partition:02}' -o brace few.ndjson
expect_eq "$STATUS" 0 "--exec with {partition} runs"
expect_contains "$ERR" "warning: --exec: {partition} is not replaced in the command" \
  "--exec with {partition} warns"
run_status ks split -k user_id -n 2 -q --exec "cat # jq '{partition: .p}'" -o jq-like few.ndjson
expect_eq "$ERR" "" "a {partition: ...} that is no --name field is not warned of"
run_status ks split -k user_id -n 2 -q --exec cat --exec-per worker --name 'p{partition}' \
  -o per-worker few.ndjson
expect_eq "$STATUS" 0 "--exec-per worker with --name runs"
expect_contains "$ERR" "warning: --name names partition files; with --exec-per worker" \
  "--name with --exec-per worker warns"
run_status ks split -k user_id -n 2 -q --exec $' \t ' -o blank few.ndjson
expect_eq "$STATUS" 2 "a blank --exec"
expect_contains "$ERR" "--exec: names no command" "a blank --exec is refused"
pass "--exec warns of what it does not do, and refuses a blank command"

# A stateful per-key worker: running balances per account equal one sequential pass.
python3 - > tx.ndjson <<'PY'
import random
rng = random.Random(5)
for i in range(60000):
    account = "acc-7" if rng.random() < 0.1 else f"acc-{rng.randint(1, 300)}"
    amount = rng.randint(1, 500) * (1 if rng.random() < 0.6 else -1)
    print(f'{{"account":"{account}","amount":{amount},"seq":{i}}}')
PY
balance='BEGIN { FS = "\"" } { split($0, a, "\"amount\":"); split(a[2], b, ","); total[$4] += b[1]; print $4, total[$4] }'
awk "$balance" tx.ndjson | sort -s -k1,1 > expected.txt
for partitions in 1 4 64; do
  for threads in 1 2; do
    rm -rf bal
    ks split -k account -n "$partitions" -j "$threads" -o bal -q --exec "awk '$balance'" tx.ndjson
    cat bal/part-*.ndjson | sort -s -k1,1 > got.txt
    expect_same_file got.txt expected.txt "running balances -n $partitions -j $threads"
  done
done
pass "per-key state matches a sequential run"

# Failures stop the run with status 1 and name the partition, the command and the status.
run_status ks split -k user_id -n 4 -o failing -q \
  --exec 'if [ "$KEYSHARD_PARTITION" = 2 ]; then exit 3; fi; cat' events.ndjson
expect_eq "$STATUS" 1 "failing child"
expect_contains "$ERR" "partition 2: command" "names the partition"
expect_contains "$ERR" "exited with status 3" "names the status"
expect_contains "$ERR" "to change the command or other options, start over with --force" \
  "says how to change the command (resume keeps it)"
run_status ks split -k user_id -n 2 -o killed -q --exec 'kill -9 $$' events.ndjson
expect_eq "$STATUS" 1 "killed child"
expect_contains "$ERR" "killed by signal 9" "names the signal"
run_status ks split -k user_id -n 2 -o early -q --exec 'head -n 1' events.ndjson
expect_eq "$STATUS" 1 "early exit"
expect_contains "$ERR" "--allow-early-exit" "hint"
ks split -k user_id -n 2 -o allowed -q --allow-early-exit --exec 'head -n 1' events.ndjson
expect_eq "$(cat allowed/part-*.ndjson | wc -l)" 2 "--allow-early-exit"
# An input small enough to sit in the pipe (about 18 KB a partition, more than head's buffer):
# no write fails, yet the child left some of it unread. That is an early exit too, also for a
# child that exits at once or after closing stdin.
head -n 150 events.ndjson > small.ndjson
for command in 'head -n 1' 'true' 'exec 0<&-; sleep 0.2; cat /dev/null'; do
  run_status timeout 60 "$KEYSHARD" split -k user_id -n 2 -o "small-early" --force -q \
    --exec "$command" small.ndjson
  expect_eq "$STATUS" 1 "early exit of \`$command\` with all its input in the pipe"
  expect_contains "$ERR" "exited before reading all its input" "the reason, for \`$command\`"
done
# A child that closes its input and goes on running: that is said at once (it may run for
# long), and the run ends once the child has ended; with --allow-early-exit, the run goes on.
rm -f closed.go
"$KEYSHARD" split -k user_id -n 2 -o closed-early -q --exec "if [ \$KEYSHARD_PARTITION = 0 ]; \
then exec 0<&-; while [ ! -e '$PWD/closed.go' ]; do sleep 0.05; done; else cat; fi" \
  events.ndjson 2> closed.err &
pid=$!
wait_until grep -q "yet goes on running: the run stops, and ends once the command has exited" \
  closed.err || { touch closed.go; fail "no word of a child that closed its input and goes on"; }
kill -0 "$pid" 2>/dev/null || { touch closed.go; fail "the run did not wait for the child"; }
touch closed.go
set +e; wait "$pid"; STATUS=$?; set -e
expect_eq "$STATUS" 1 "a child that closed its input and went on"
expect_contains "$(cat closed.err)" "partition 0: command \`if [ \$KEYSHARD_PARTITION = 0 ]; then \
exec 0<&-; " "the child named"
expect_contains "$(cat closed.err)" "closed its input before reading all of it (--allow-early-exit \
permits this)" "what it did, and what permits it"
rm -f closed.go
# With --allow-early-exit, the worker that feeds it goes on with its other partitions meanwhile
# (-j 1: one worker feeds both): partition 1 has all its events while partition 0's child runs.
rm -f closed.go
"$KEYSHARD" split -k user_id -n 2 -j 1 -o closed-allowed -q --allow-early-exit --exec "if [ \
\$KEYSHARD_PARTITION = 0 ]; then exec 0<&-; while [ ! -e '$PWD/closed.go' ]; do sleep 0.05; \
done; else cat; fi" events.ndjson &
pid=$!
ones=$(grep -o '"user_id":"[^"]*"' events.ndjson | cut -d'"' -f4 | ks which -n 2 | grep -c '^1$')
has_all_ones() { [ "$(wc -l < closed-allowed/part-00001.ndjson)" = "$ones" ]; }
wait_until has_all_ones ||
  { touch closed.go; fail "--allow-early-exit: the worker waited on the child that went on"; }
touch closed.go
set +e; wait "$pid"; STATUS=$?; set -e
expect_eq "$STATUS" 0 "--allow-early-exit: a child that closed its input and went on"
rm -f closed.go
ks split -k user_id -n 2 -o small-allowed -q --allow-early-exit --exec 'head -n 1' small.ndjson
expect_eq "$(cat small-allowed/part-*.ndjson | wc -l)" 2 "--allow-early-exit, a small input"
timeout 60 "$KEYSHARD" split -k user_id -n 2 -o small-read -q --exec 'head -n 150' small.ndjson
expect_eq "$(cat small-read/part-*.ndjson | wc -l)" 150 "a child that read all, then exited"
# SIGTERM while keyshard waits for a child to read the rest does not make an early exit a
# success: the wait goes on, and the early exit is reported. The children hold off reading until
# term-early.go appears; the signal is sent once the whole input sits in their pipes (keyshard
# has read it all and waits for them), however slow the build. It is sent twice, as timeout(1)
# does (to keyshard, then to its process group): that is one request. (The second goes as soon
# as keyshard has taken the first, well inside the 500 ms in which a repeat is one request; how
# soon is the one thing here that rests on timing.) With one request, the children go on after
# the signals; with a second request, a second later, keyshard ends at once, without waiting for
# them (they go on, and end, after it has).
term_pending() {  # term_pending PID: PID is alive with a SIGTERM not yet taken (builtins only)
  local key value mask=0
  { while read -r key value; do [ "$key" = ShdPnd: ] && mask=$value; done; } \
    2> /dev/null < "/proc/$1/status" || return 1
  (( 16#$mask >> (15 - 1) & 1 ))
}
term_none_pending() { ! term_pending "$1"; }
term_taken() {  # term_taken PID: waits until PID has taken the SIGTERM sent to it
  wait_until term_none_pending "$1" || term_early_fail "keyshard did not take a SIGTERM"
}
term_early_fail() {  # (the run and its waiting children are not left behind)
  kill -KILL "$pid" 2>/dev/null || true
  touch term-early.go
  fail "$@"
}
for requests in 1 2; do
  rm -f term-early.started.* term-early.go
  "$KEYSHARD" split -k user_id -n 2 -o "term-early-$requests" -q \
    --exec 'echo $$ > "term-early.started.$KEYSHARD_PARTITION"; until [ -e term-early.go ]; do sleep 0.02; done; head -n 1' \
    small.ndjson 2> term-early.err &
  pid=$!
  python3 - "$(stat -c %s small.ndjson)" <<'PY' || term_early_fail "the input never sat in the children's pipes"
import fcntl, os, struct, sys, termios, time
deadline = time.monotonic() + 60
while True:
    try:  # the bytes waiting in each child's stdin pipe (FIONREAD on a reader of its own)
        unread = 0
        for partition in (0, 1):
            child = int(open(f"term-early.started.{partition}").read())
            pipe = os.open(f"/proc/{child}/fd/0", os.O_RDONLY | os.O_NONBLOCK)
            try:
                unread += struct.unpack("i", fcntl.ioctl(pipe, termios.FIONREAD, bytes(4)))[0]
            finally:
                os.close(pipe)
        if unread == int(sys.argv[1]):
            break
    except (OSError, ValueError):
        pass  # (a child not started yet)
    if time.monotonic() > deadline:
        sys.exit("the whole input was not in the children's pipes after 60 s")
    time.sleep(0.02)
PY
  children=$(cat term-early.started.0 term-early.started.1)
  kill -TERM "$pid" 2>/dev/null || true
  term_taken "$pid"
  kill -TERM "$pid" 2>/dev/null || true
  term_taken "$pid"
  if [ "$requests" = 2 ]; then
    sleep 1
    kill -TERM "$pid" 2>/dev/null || true
  else
    touch term-early.go
  fi
  set +e; wait "$pid"; STATUS=$?; set -e
  touch term-early.go
  for child in $children; do  # (no process of the test's left behind)
    for _ in $(seq 3000); do
      [ -e "/proc/$child" ] && [[ "$(cat "/proc/$child/stat" 2>/dev/null)" != *") Z "* ]] ||
        break
      sleep 0.02
    done
  done
  if [ "$requests" = 1 ]; then
    expect_eq "$STATUS" 1 "an early exit, SIGTERM (sent twice) during the wait"
    expect_contains "$(cat term-early.err)" "exited before reading all its input" "the early exit"
  else
    expect_eq "$STATUS" 143 "a second SIGTERM a second later"
    # (Only the notice of the wait, which the first request may have had time to print: as the
    # input sits whole in the pipes, in the words of a signal that came once it was all read,
    # or else of an interruption.)
    late="^keyshard: SIGTERM came once the whole input was read: the run finishes, waiting"
    expect_eq "$(grep -v -e '^keyshard: interrupted: waiting for the children' -e "$late" \
                 term-early.err)" "" "no message after a second SIGTERM"
  fi
done
# A child whose own child goes on reading (setsid forks, as the child leads its process group)
# has not left early: the run waits for the reader, and ends.
run_status timeout 60 "$KEYSHARD" split -k user_id -n 2 -o grandchild -q \
  --exec 'exec setsid sh -c "sleep 0.5; cat"' small.ndjson
expect_eq "$STATUS" 0 "a child that leaves a reader behind"
expect_eq "$(cat grandchild/part-*.ndjson | wc -l)" 150 "every event, read by the grandchild"
# A child that fails while the stream is quiet stops the run then, not with the next line the
# stream may send hours later; one that exits 0 is judged as before, with the next line.
for out in - quiet-dir; do
  rm -rf quiet.fifo quiet-dir && mkfifo quiet.fifo
  "$KEYSHARD" split -k user_id -n 1 -o "$out" -q --exec 'head -n 1; exit 3' < quiet.fifo \
    > quiet.out 2> quiet.err &
  pid=$!
  exec 8> quiet.fifo
  echo '{"user_id":"a"}' >&8
  wait_until sh -c "! kill -0 $pid 2>/dev/null" || fail "-o $out: the run went on"
  set +e; wait "$pid"; STATUS=$?; set -e
  exec 8>&-
  expect_eq "$STATUS" 1 "-o $out: a child failed while the stream is quiet"
  expect_contains "$(cat quiet.err)" "partition 0: command \`head -n 1; exit 3\` exited with \
status 3" "-o $out: says which child and how"
done
rm -f quiet.fifo && mkfifo quiet.fifo
"$KEYSHARD" split -k user_id -n 1 -o - -q --exec 'head -n 1' < quiet.fifo > quiet.out 2> quiet.err &
pid=$!
exec 8> quiet.fifo
echo '{"user_id":"a"}' >&8
wait_until test -s quiet.out || fail "the child's line never came"
sleep 1.5  # (a look at the children comes every second while the stream is quiet)
kill -0 "$pid" 2>/dev/null || fail "a child that exited 0 stopped the run before more input came"
echo '{"user_id":"b"}' >&8
exec 8>&-
set +e; wait "$pid"; STATUS=$?; set -e
expect_eq "$STATUS" 1 "a child that exited 0, then more input"
expect_contains "$(cat quiet.err)" "exited before reading all its input" "judged with that input"
pass "failures"

# --compress with --exec is refused, not ignored: compressed by keyshard, the children's output
# would pass through it and a SIGKILL of keyshard would lose what it held.
run_status ks split -k user_id -n 2 -q --exec cat --compress zstd -o - small.ndjson
expect_eq "$STATUS" 2 "--exec --compress -o -"
expect_contains "$ERR" "compress in the command instead, e.g. --exec 'CMD | zstd -q'" \
  "what to do instead"
expect_eq "$OUT" "" "nothing written"
run_status ks split -k user_id -n 2 -q --exec cat --compress zstd:1 -o exec-packed small.ndjson
expect_eq "$STATUS" 2 "--exec --compress -o DIR"
[ ! -e exec-packed ] || fail "nothing created for a refused --exec --compress"
pass "--exec --compress is refused"

# keyshard's own stdout closing early ends the run quietly with status 0.
set +e
ks split -k user_id -n 8 -o - --exec cat events.ndjson 2> err.txt | head -n 1 > /dev/null
statuses=("${PIPESTATUS[@]}")
set -e
expect_eq "${statuses[0]}" 0 "status when stdout closes early"
expect_eq "$(cat err.txt)" "" "no message when stdout closes early"
# ... also when the children write on after their input ends: their stdout closes too, and they
# end by SIGPIPE, as in a shell pipeline (they once ran on, and keyshard with them).
head -n 20 events.ndjson > twenty.ndjson
for command in yes 'cat; while :; do echo "{\"tick\":1}"; sleep 0.01; done'; do
  set +e
  timeout 30 "$KEYSHARD" split -k user_id -n 4 -o - --exec "$command" twenty.ndjson 2> err.txt |
    head -n 1 > /dev/null
  statuses=("${PIPESTATUS[@]}")
  set -e
  expect_eq "${statuses[0]}" 0 "stdout closes while children write on ($command)"
  expect_eq "$(cat err.txt)" "" "stdout closes while children write on ($command): no message"
done
pass "closed stdout"

# 1 MiB lines through -o - are never torn or interleaved.
python3 -c '
import sys
for i in range(40):
    sys.stdout.write("{\"k\":\"%d\",\"pad\":\"%s\"}\n" % (i % 4, chr(97 + i % 26) * (1 << 20)))' > big.ndjson
ks split -k k -n 4 -o - -q --exec cat big.ndjson | sort > got-big.txt
sort big.ndjson > want-big.txt
expect_same_file got-big.txt want-big.txt "1 MiB lines through -o -"
# A child's line over --max-line-size stops the run, and no piece of it (nor anything after it)
# reaches stdout.
seq 1 4000 | awk '{ printf "{\"k\":\"k%d\"}\n", $1 }' > few-keys.ndjson
run_status ks split -q -k k -n 2 --max-line-size 1MiB -o - few-keys.ndjson \
  --exec 'cat > /dev/null; head -c 3000000 /dev/zero | tr "\0" "$KEYSHARD_PARTITION"; echo'
expect_eq "$STATUS" 1 "a child's output line over --max-line-size"
expect_contains "$ERR" "a line of its output is longer than --max-line-size" "the error"
expect_eq "$(printf %s "$OUT" | wc -c)" 0 "no piece of the long lines on stdout"
pass "1 MiB lines"

# --annotate key shows each child where an event came from.
ks split -k user_id -n 2 -o - -q --annotate partition,key --exec cat events.ndjson | head -n 1 > first.txt
python3 - first.txt <<'PY'
import json, sys
event = json.loads(open(sys.argv[1]).read())
assert event["_key"] == event["user_id"], event
assert event["_partition"] in (0, 1), event
PY
pass "--annotate key"

# --exec-per worker: one child per worker, fed every partition that worker owns, in order.
ks split -k account -n 64 -j 2 -o perworker -q --exec-per worker --exec "awk '$balance'" tx.ndjson
expect_eq "$(ls perworker | grep -c '^worker-')" 2 "one output per worker"
cat perworker/worker-*.ndjson | sort -s -k1,1 > got.txt
expect_same_file got.txt expected.txt "running balances with --exec-per worker"
pass "--exec-per worker"

# A child that never reads: keyshard waits (like any pipeline) with bounded memory.
"$GEN_EVENTS" --events "$(scaled 400000)" --seed 2 > more.ndjson
ks split -k user_id -n 4 -o stuck -q --exec 'sleep 60' more.ndjson &
pid=$!
sleep 2
kill -0 "$pid" 2>/dev/null || fail "keyshard should still be waiting for the child"
rss_kib=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")
[ "$rss_kib" -lt $((200 * 1024)) ] || fail "memory while blocked: $rss_kib KiB"
# (Only this run's children go, each with its process group, which it leads: any process of
# theirs. Then keyshard, whose reader is gone, ends.)
for child in $(pgrep -P "$pid" || true); do kill -- -"$child" 2>/dev/null || true; done
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
pass "a child that never reads: bounded wait ($rss_kib KiB)"

# A slow child slows the run; memory stays bounded, well below the input's size. (The children
# pass on 64 KiB at a time with a pause after each: slow, but they take little CPU.)
cat > slow_child.py <<'PY'
import sys, time
while piece := sys.stdin.buffer.read1(65536):
    sys.stdout.buffer.write(piece)
    time.sleep(0.002)
PY
/usr/bin/time -f '%M' -o rss.txt "$KEYSHARD" split -k user_id -n 2 -o slow -q \
  --exec "python3 '$PWD/slow_child.py'" more.ndjson
input_kib=$(( $(stat -c %s more.ndjson) / 1024 ))
limit_kib=$(( input_kib / 2 ))
# (A sanitizer's own memory is larger than the smaller input it gets there.)
[ "${SANITIZED:-0}" = 1 ] && limit_kib=$(( 200 * 1024 ))
[ "$(cat rss.txt)" -lt "$limit_kib" ] ||
  fail "peak RSS with a slow child: $(cat rss.txt) KiB, for $input_kib KiB of input"
expect_eq "$(cat slow/part-*.ndjson | wc -l)" "$(scaled 400000)" "every event reached the slow children"
expect_eq "$(cat slow/part-*.ndjson | sort | md5sum)" "$(sort more.ndjson | md5sum)" \
  "the slow children passed on every event whole"
pass "slow child ($(cat rss.txt) KiB peak, $input_kib KiB of input)"

# With checkpoints, an --exec run killed half-way and resumed is at-least-once: every event
# reaches its partition's child, and those after the last checkpoint may reach it twice.
ks split -k user_id -n 4 -o exec-ref -q --exec cat more.ndjson
# kill_after_first_checkpoint DIR ARGS...: starts `keyshard split ARGS... -o DIR` and kills it
# (SIGKILL) once it has written a checkpoint past the start.
kill_after_first_checkpoint() {
  local dir=$1
  shift
  "$KEYSHARD" split "$@" -o "$dir" &
  local pid=$!
  wait_until grep -qE '"offset":[1-9]' "$dir/.keyshard/checkpoint.json" || true
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
# wait_for_children DIR: until no process has DIR's outputs open (the children of a killed run
# end once their input is closed).
outputs_closed() {  # outputs_closed DIR: no process has DIR's outputs open
  # (Not a pipe: under pipefail, ls cut short by grep -q would make a match look like none.)
  # shellcheck disable=SC2010 # (the links' targets are what is looked for)
  ! grep -q "$(pwd -P)/$1/part-" < <(ls -l /proc/[0-9]*/fd 2>/dev/null)
}
wait_for_children() {
  wait_until outputs_closed "$1" || fail "the children of the killed run in $1 did not end"
}
# expect_killed_mid_run DIR: once the killed run's children have ended, its checkpoint is not
# that of a finished run.
expect_killed_mid_run() {
  wait_for_children "$1"
  grep -q '"complete": false' "$1/.keyshard/checkpoint.json" ||
    fail "$1: the run ended before it was killed; nothing was tested"
}
# end_cut_short DIR [REF]: a child stopped mid-line leaves its output without a final newline;
# made sure of here for DIR's part-00000 (unless the kill did it already), with the start of an
# event of REF (exec-ref).
end_cut_short() {
  expect_killed_mid_run "$1"
  [ -n "$(tail -c 1 "$1/part-00000.ndjson")" ] ||
    head -c 20 "${2:-exec-ref}/part-00000.ndjson" >> "$1/part-00000.ndjson"
}
kill_after_first_checkpoint exec-crash -k user_id -n 4 -q --exec cat --chunk-size 64KiB \
  --checkpoint-every 256KiB more.ndjson
end_cut_short exec-crash
ks resume -q exec-crash
# expect_at_least_once DIR WHAT [REF]: DIR's outputs hold every event of REF's (exec-ref's), in
# lines of their own. A SIGKILL while keyshard was writing to a child may have left that child one line cut
# short (its event comes after the checkpoint and is sent again in full); resume ends that line,
# so the resumed child's first line is a line of its own. Nothing else may be there that is not
# an event.
expect_at_least_once() {
  local f got
  for f in "${3:-exec-ref}"/part-*.ndjson; do
    got="$1/$(basename "$f")"
    python3 - "$f" "$got" <<'PY' || fail "$2: the events of $(basename "$f")"
import sys
want = set(open(sys.argv[1], "rb").read().splitlines())
got = open(sys.argv[2], "rb").read().splitlines()
missing = want - set(got)
extra = [line for line in got if line not in want]
problems = []
if missing:
    problems.append(f"{len(missing)} events missing")
if len(extra) > 1:
    problems.append(f"{len(extra)} lines that are not events")
for line in extra:
    if not any(w.startswith(line) for w in want):
        problems.append(f"a line that is neither an event nor a cut one: {line[:120]!r}")
for problem in problems:
    print(problem, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
  done
}
expect_at_least_once exec-crash "--exec resume"

# Killed before any checkpoint but the one at the start (here, the only one until the end), or
# after a resume from an orderly stop before the resumed run wrote one: the checkpoint then on
# disk was written when no child was fed, yet children were fed after it, and resume ends a cut
# line all the same.
# kill_when_fed SIGNAL DIR COMMAND...: runs COMMAND in the background and sends it SIGNAL once
# DIR/part-00000.ndjson has grown past its size now.
grown_past() {  # grown_past FILE SIZE: FILE is larger than SIZE bytes
  [ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -gt "$2" ]
}
kill_when_fed() {
  local signal=$1 dir=$2 before
  shift 2
  before=$(stat -c %s "$dir/part-00000.ndjson" 2>/dev/null || echo 0)
  "$@" &
  local pid=$!
  wait_until grown_past "$dir/part-00000.ndjson" "$before" || true
  kill "-$signal" "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
# (An input of full size in sanitizer builds too: were it all read ahead of the children, a
# signal once they are fed could come after its last line was read, and the run would end
# complete.)
"$GEN_EVENTS" --events 400000 --seed 2 > fed.ndjson
ks split -k user_id -n 4 -o fed-ref -q --exec cat fed.ndjson
kill_when_fed KILL exec-early "$KEYSHARD" split -k user_id -n 4 -q --exec cat \
  --checkpoint-every off -o exec-early fed.ndjson
end_cut_short exec-early fed-ref
ks resume -q exec-early
expect_at_least_once exec-early "--exec killed before its first checkpoint, resumed" fed-ref
kill_when_fed TERM exec-stop "$KEYSHARD" split -k user_id -n 4 -q --exec cat \
  --checkpoint-every off -o exec-stop fed.ndjson
expect_killed_mid_run exec-stop
grep -q '"exec_settled": true' exec-stop/.keyshard/checkpoint.json ||
  fail "--exec stopped by SIGTERM: the checkpoint says every child ended its output"
kill_when_fed KILL exec-stop "$KEYSHARD" resume -q exec-stop
end_cut_short exec-stop fed-ref
ks resume -q exec-stop
expect_at_least_once exec-stop "--exec stopped, resumed, killed before a checkpoint, resumed" \
  fed-ref
pass "--exec with resume: at-least-once"

# A child that fails with events still unread in its pipe: no checkpoint counts them (each waits
# until every child has read what it was handed), so resume sends them again.
seq 1 60000 | awk '{ printf "{\"k\":\"k%d\",\"seq\":%d}\n", $1 % 1000, $1 }' > unread.ndjson
touch fail-once
# shellcheck disable=SC2016  # (the child's shell expands it)
failing='if [ "$KEYSHARD_PARTITION" = 0 ] && [ -e fail-once ]; then
  IFS= read -r line; printf "%s\n" "$line"; sleep 1; exit 1; fi; exec cat'
run_status ks split -q -k k -n 8 --chunk-size 64KiB --checkpoint-every 64KiB -o unread-out \
  --exec "$failing" unread.ndjson
expect_eq "$STATUS" 1 "a child that failed with events unread"
expect_contains "$ERR" "partition 0: command" "the failed child is named"
rm fail-once
ks resume -q unread-out
missing=$(cat unread-out/part-*.ndjson | sort -u | comm -23 <(sort unread.ndjson) - | wc -l)
expect_eq "$missing" 0 "events left unread by the failed child, after resume"
pass "--exec: events a failed child left unread are sent again by resume"

# A child whose output is not text (gzip) ends it whole when keyshard is killed; resume leaves
# it so (a newline put in there would end zcat's reading) and appends the new child's stream.
kill_after_first_checkpoint gzip-crash -k user_id -n 4 -q --exec 'gzip -c' --chunk-size 64KiB \
  --checkpoint-every 256KiB more.ndjson
expect_killed_mid_run gzip-crash  # (and the children have ended their streams)
ks resume -q gzip-crash
for f in exec-ref/part-*.ndjson; do
  got="gzip-crash/$(basename "$f")"
  gzip -dc < "$got" > unzipped.ndjson || fail "--exec gzip resumed: $got is not a gzip stream"
  what="--exec gzip resumed: the events of $(basename "$f")"
  python3 - "$f" unzipped.ndjson <<'PY' || fail "$what"
import sys
want = set(open(sys.argv[1], "rb").read().splitlines())
got = set(open(sys.argv[2], "rb").read().splitlines())
# An event cut short in the first child's input is sent again in full, and in a stream that is
# not text it follows the cut part on the same line: one line may be both.
extra = [line for line in got if line not in want]
missing = [event for event in want - got if not any(line.endswith(event) for line in extra)]
if missing or len(extra) > 1:
    sys.exit(f"{len(missing)} events missing, {len(extra)} lines that are not events")
PY
done
pass "--exec output that is not text is left whole by resume"

# No child starts before every output and the dead-letter file passed their checks: a resume
# refused over one of them leaves every output as it was, even with children that write as their
# input ends (wc -l would add a count to each); a run that fails over one of them as it opens
# its outputs prints nothing on standard output.
{ head -n 40 events.ndjson; echo 'not an event'; sed -n '41,80p' events.ndjson; } > with-bad.ndjson
ks split -q -k user_id -n 4 --exec 'wc -l' -o exec-refused with-bad.ndjson
unfinish exec-refused
sed -i '1s/^./X/' exec-refused/dead-letter.ndjson
cp -a exec-refused exec-refused-before
for threads in 1 2; do
  run_status ks resume -j "$threads" exec-refused
  expect_eq "$STATUS" 1 "--exec resume -j $threads with the dead-letter file changed"
  expect_contains "$ERR" "exec-refused/dead-letter.ndjson: was changed since the checkpoint" \
    "--exec resume -j $threads: the changed file is named"
  run_status diff -r --exclude=lock exec-refused-before exec-refused
  expect_eq "$STATUS" 0 "--exec resume -j $threads refused: every file is as it was: $OUT"
done
# So does a resume refused over the input it goes on with, which changed since the checkpoint.
cp with-bad.ndjson changing.ndjson
ks split -q -k user_id -n 4 --exec 'wc -l' -o exec-input-changed changing.ndjson
unfinish exec-input-changed
sed -i '1s/^./X/' changing.ndjson
cp -a exec-input-changed exec-input-changed-before
run_status ks resume exec-input-changed
expect_eq "$STATUS" 1 "--exec resume with its input changed"
expect_contains "$ERR" "changing.ndjson: changed since the checkpoint" "the input is named"
run_status diff -r --exclude=lock exec-input-changed-before exec-input-changed
expect_eq "$STATUS" 0 "--exec resume refused over its input: every file is as it was: $OUT"
mkdir -p a-directory
run_status ks split -q -k user_id -n 3 --exec 'echo started' -o - --dead-letter a-directory \
  with-bad.ndjson
expect_eq "$STATUS" 1 "--exec -o - with a directory for --dead-letter"
expect_contains "$ERR" "a-directory: cannot create: Is a directory" "the directory is named"
expect_eq "$OUT" "" "no child started, so nothing on standard output"
pass "--exec: a run refused or failed as it opens its outputs starts no child"

# A child that cannot be started once others were (a limit of processes reached part-way): the run
# fails naming it, and does not wait forever on the children started, which print more than a
# pipe holds. The third fork fails: -j 2 makes it partition 4's, owner 0 starting 0, 2 and 4. The
# collector drains the children started as they end; where no thread can be started either (the
# same limit), their pipes are closed unread. (A sanitizer's runtime asks to come first among the
# libraries; the preloaded one comes before it. A run that hangs ignores the first SIGTERM, as
# an orderly stop: -k.)
: "${FORK_FAILER:?set FORK_FAILER to the fork_failer library}"
preload_asan_options="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
for threads_too in "" 1; do
  what="a child that cannot start after two did${threads_too:+, nor a thread}"
  run_status timeout -k 5 60 env FAIL_FORK_AT=3 FAIL_THREADS_TOO="$threads_too" \
    LD_PRELOAD="$FORK_FAILER" ASAN_OPTIONS="$preload_asan_options" \
    "$KEYSHARD" split -q -k user_id -n 6 -j 2 -o "fork-failed$threads_too" \
    --exec 'seq 30000 >&2; cat > /dev/null' few.ndjson
  expect_eq "$STATUS" 1 "$what: exit status (124 or 137: it hung)"
  expect_contains "$ERR" "keyshard: partition 4: cannot start /bin/sh: " "$what: which, and why"
  if [ -z "$threads_too" ]; then
    expect_contains "$ERR" "[partition 2] 30000" "$what: the children started were heard out"
  fi
done
pass "--exec: a child that cannot start after others did ends the run"

# After an orderly end, an output is left as its child ended it: a later --incremental run
# appends to output that is not lines (no newline put in between).
printf '{"user_id":"a"}\n{"user_id":"a"}\n' > counted.ndjson
ks split -q --incremental -k user_id -n 1 --exec 'printf "count=%s;" "$(wc -l)"' -o counted \
  counted.ndjson
printf '{"user_id":"a"}\n' >> counted.ndjson
ks split -q --incremental -k user_id -n 1 --exec 'printf "count=%s;" "$(wc -l)"' -o counted \
  counted.ndjson
expect_eq "$(cat counted/part-00000.ndjson)" "count=2;count=1;" \
  "an --exec output that is not lines, appended to by a later --incremental run"
pass "--exec outputs after an orderly end are left as the children ended them"

# SIGINT that keyshard was started ignoring (a background job of a script) stays ignored, by
# keyshard and by its children.
python3 - "$KEYSHARD" <<'PY' || fail "an ignored SIGINT"
import os, signal, subprocess, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
os.mkfifo("ignored.fifo")
run = subprocess.Popen([sys.argv[1], "split", "-q", "-k", "user_id", "-n", "1", "-o", "ignored",
                        "--exec", "grep SigIgn /proc/self/status > sigign.txt; cat",
                        "ignored.fifo"], restore_signals=False)
with open("ignored.fifo", "w") as feed:
    feed.write('{"user_id":"a"}\n')
    feed.flush()
    time.sleep(0.2)
    run.send_signal(signal.SIGINT)  # ignored: the run goes on
    time.sleep(0.2)
    feed.write('{"user_id":"b"}\n')
status = run.wait()
assert status == 0, status
assert open("ignored/part-00000.ndjson").read() == '{"user_id":"a"}\n{"user_id":"b"}\n'
mask = int(open("sigign.txt").read().split()[1], 16)
assert mask & (1 << (signal.SIGINT - 1)), hex(mask)  # the child ignores SIGINT too
PY
pass "a SIGINT keyshard was started ignoring stays ignored"

# A signal once the whole input was read: the children end in order, which keyshard says it
# waits for when that takes a while, and the run finishes, saying so, complete. Here the child
# itself signals keyshard (its parent) once its input has ended, then takes its time.
head -n 200 events.ndjson > late.ndjson
run_status ks split -k user_id -n 1 -q --exec 'cat; kill -TERM $PPID; sleep 3' -o late late.ndjson
expect_eq "$STATUS" 0 "a SIGTERM once the whole input was read"
expect_contains "$ERR" "keyshard: SIGTERM came once the whole input was read: the run finishes, \
waiting for the children to take the events they were handed and end" "the wait is said"
if grep -q "interrupted" <<<"$ERR"; then fail "a run signalled late is not said to be interrupted"; fi
expect_contains "$ERR" "warning: SIGTERM came once the whole input was read, so the run \
finished: it is complete" "the late signal is said"
expect_same_file late/part-00000.ndjson late.ndjson "the output of a run signalled late"
grep -q '"complete": true' late/.keyshard/checkpoint.json || fail "the checkpoint says complete"
pass "a signal once the whole input was read: the run says it waits, and finishes"

# A ^C sent to keyshard's process group while it is still starting the children reaches
# keyshard alone, which ends the run in order (status 130): a child not yet in its own group
# drops it. Tried at several moments of the start.
python3 - "$KEYSHARD" <<'PY' || fail "a ^C while the children start"
import os, random, signal, subprocess, sys, time
random.seed(7)
bad = []
for attempt in range(20):
    out = f"early-int-{attempt}"
    run = subprocess.Popen([sys.argv[1], "split", "-q", "-k", "user_id", "-n", "64", "--exec", "cat",
                            "--checkpoint-every", "2MiB", "-o", out, "more.ndjson"],
                           start_new_session=True, stderr=subprocess.PIPE)
    time.sleep(random.uniform(0, 0.05))
    os.killpg(run.pid, signal.SIGINT)
    err = run.communicate()[1].decode(errors="replace")
    if run.returncode not in (130, -signal.SIGINT):
        bad.append(f"after attempt {attempt}: status {run.returncode}: {err.strip()[:200]}")
for problem in bad:
    print(problem, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
pass "a ^C while the children start ends the run in order"

# --exec-per worker ties partitions to workers: a resume or a later --incremental run may not
# change -j (each child would get other partitions, and a key's events would go to two).
for i in $(seq 1 8); do echo "{\"k\":\"key$i\",\"n\":1}"; done > per-worker.ndjson
rm -rf per-worker
run_status ks split -q -k k -n 8 -j 2 --exec cat --exec-per worker -o per-worker \
  per-worker.ndjson not-there.ndjson
expect_eq "$STATUS" 1 "a per-worker run stopped by a missing input"
run_status ks resume -q -j 1 per-worker
expect_eq "$STATUS" 2 "resume of a per-worker run with another -j"
expect_contains "$ERR" "so -j must stay 2" "resume of a per-worker run with another -j: why"
rm -rf per-worker
ks split -q --incremental -k k -n 8 -j 2 --exec cat --exec-per worker -o per-worker \
  per-worker.ndjson
for i in $(seq 1 8); do echo "{\"k\":\"key$i\",\"n\":2}"; done >> per-worker.ndjson
run_status ks split -q --incremental -k k -n 8 -j 1 --exec cat --exec-per worker \
  -o per-worker per-worker.ndjson
expect_eq "$STATUS" 2 "an --incremental per-worker run with another -j"
expect_contains "$ERR" "--threads 2 then, 1 now" "an --incremental per-worker run with another -j: why"
ks split -q --incremental -k k -n 8 -j 2 --exec cat --exec-per worker -o per-worker \
  per-worker.ndjson
for i in $(seq 1 8); do
  files=$(grep -l "\"key$i\"" per-worker/worker-* | wc -l)
  expect_eq "$files" 1 "key$i's events all went to one worker's child"
done
# Without -j, a later --incremental run takes the last run's worker count, not this machine's
# processor count.
rm -rf per-worker
ks split -q --incremental -k k -n 8 -j 3 --exec cat --exec-per worker -o per-worker \
  per-worker.ndjson
for i in $(seq 1 8); do echo "{\"k\":\"key$i\",\"n\":3}"; done >> per-worker.ndjson
run_status ks split -q --incremental -k k -n 8 --exec cat --exec-per worker -o per-worker \
  per-worker.ndjson
expect_eq "$STATUS" 0 "an --incremental per-worker run without -j: $ERR"
expect_eq "$(ls per-worker/worker-* | wc -l)" 3 "still three workers' children"
for i in $(seq 1 8); do
  expect_eq "$(grep -l "\"key$i\"" per-worker/worker-* | wc -l)" 1 "key$i: one worker's child"
done
# ... and the files it would write over are those three workers' files, whatever the machine.
run_status ks split -q --incremental -k k -n 8 --exec cat --exec-per worker -o per-worker \
  per-worker.ndjson per-worker/worker-00002.ndjson
expect_eq "$STATUS" 2 "an --incremental per-worker run reading its third worker's file"
expect_contains "$ERR" "worker-00002.ndjson: is both an input and an output" \
  "an --incremental per-worker run reading its third worker's file: why"
# ... and only those: with one worker then, worker-00001.ndjson is no file of the run's.
rm -rf per-worker
ks split -q --incremental -k k -n 8 -j 1 --exec cat --exec-per worker -o per-worker \
  per-worker.ndjson
run_status ks split -q --incremental -k k -n 8 --exec cat --exec-per worker -o per-worker \
  per-worker.ndjson per-worker/worker-00001.ndjson
expect_eq "$STATUS" 0 "an --incremental one-worker run naming a second worker's file: $ERR"
expect_contains "$ERR" "worker-00001.ndjson: not found; skipped this time" \
  "an --incremental one-worker run naming a second worker's file: a file missing, as any"
expect_eq "$(ls per-worker/worker-*)" per-worker/worker-00000.ndjson "still one worker's file"
pass "--exec-per worker: -j cannot change on resume or --incremental"

# A shell that cannot be started is named as such, and the run leaves no partition files.
# (Hiding /bin/sh takes a mount namespace of keyshard's own: root, or user namespaces.)
if unshare -m true 2> /dev/null; then
  printf '{"k":"a"}\n' > one.ndjson
  run_status unshare -m bash -c 'mount -t tmpfs none "$(dirname "$(realpath /bin/sh)")" &&
    "$0" split -k k -n 2 -o nosh --exec cat one.ndjson' "$KEYSHARD"
  expect_eq "$STATUS" 1 "status when /bin/sh cannot be started"
  expect_contains "$ERR" "partition 0: cannot start /bin/sh: No such file or directory" \
    "the reason a child could not start"
  expect_eq "$(ls nosh)" "" "no partition files left"
  pass "a shell that cannot be started"
else
  echo "exec: SKIP: no mount namespace (needs root), so /bin/sh could not be hidden"
fi

# A child's long stderr line (no newline for 3 MB) goes on in pieces, each with the child's
# label; a long stdout line under -o - is passed through whole. Neither holds the run up.
printf '{"k":"a"}\n' > one-event.ndjson
run_status timeout 60 "$KEYSHARD" split -q -k k -n 1 -o long-stderr --max-line-size 4KiB \
  --exec "head -c 3000000 /dev/zero | tr '\\0' a >&2; echo ' end' >&2; cat > /dev/null" \
  one-event.ndjson
expect_eq "$STATUS" 0 "a run whose child writes a 3 MB stderr line"
printf '%s\n' "$ERR" > long-stderr.err
expect_eq "$(grep -vc '^\[partition 0\] a*\( end\)\?$' long-stderr.err)" 0 \
  "every piece is a line with the child's label"
expect_eq "$(sed 's/^\[partition 0\] //' long-stderr.err | tr -d '\n' | tr -d ' end' | wc -c)" \
  3000000 "every byte of the line"
# 3,000,000 bytes are 45 pieces of 65,536 bytes and one of 50,880 (then " end").
expect_eq "$(sed 's/^\[partition 0\] //' long-stderr.err | awk '{print length($0)}' | uniq -c |
             tr -s ' ')" "$(printf ' 45 65536\n 1 50884')" "pieces of exactly 64 KiB"
# A line of exactly two pieces ends with the second: no empty line follows it.
run_status timeout 60 "$KEYSHARD" split -q -k k -n 1 -o exact-stderr \
  --exec "head -c 131072 /dev/zero | tr '\\0' c >&2; echo >&2; echo next >&2; cat > /dev/null" \
  one-event.ndjson
expect_eq "$(printf '%s\n' "$ERR" | awk '{print length($0)}' | tr '\n' ' ')" \
  "65550 65550 18 " "a line of exactly two pieces, then the next line"
timeout 60 "$KEYSHARD" split -q -k k -n 1 -o - \
  --exec "head -c 3000000 /dev/zero | tr '\\0' b; echo; cat > /dev/null" one-event.ndjson \
  > long-stdout.txt
expect_eq "$(wc -lc < long-stdout.txt | tr -s ' ')" " 1 3000001" "a 3 MB stdout line, whole"
pass "a child's long lines: stderr in labelled pieces, stdout whole"

# Too few processes allowed for the children is refused before any starts, saying why.
run_status bash -c 'ulimit -u 32 && exec "$0" split -q -k k -n 8 -o few-procs --exec cat \
  one-event.ndjson' "$KEYSHARD"
expect_eq "$STATUS" 2 "-n 8 --exec under ulimit -u 32"
expect_contains "$ERR" "--exec would start 8 children, and needs room for about 32 processes more" \
  "the message"
expect_contains "$ERR" 'raise `ulimit -u`' "what to do"
pass "too few processes for the children"

# DIR removed while the run is held by its children: the message says the checkpoint the run
# wrote is gone, not that it wrote none.
"$GEN_EVENTS" --bytes 20000000 --seed 5 > held.ndjson
rm -f go
"$KEYSHARD" split -q -k user_id -n 2 -o removed-dir \
  --exec "while [ ! -e '$PWD/go' ]; do sleep 0.05; done; exec cat" held.ndjson 2> removed.err &
running=$!
for _ in $(seq 600); do
  [ -e removed-dir/.keyshard/checkpoint.json ] && break
  sleep 0.05
done
sleep 0.5  # (the checkpoint is renamed into place, then its directory synced)
rm -rf removed-dir
touch go
set +e
wait "$running"
STATUS=$?
set -e
expect_eq "$STATUS" 1 "a run whose DIR was removed"
expect_contains "$(cat removed.err)" "the checkpoint this run wrote in removed-dir is gone" \
  "the message"
expect_contains "$(cat removed.err)" 'if the directory was moved, `keyshard resume NEWDIR`' \
  "what to do"
pass "DIR removed during a run"

