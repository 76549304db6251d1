#!/usr/bin/env bash
# The progress line: drawn on a terminal (tested through a pseudo-terminal made by script(1)),
# at most ~6 times a second, cleared before the summary; never when stderr is not a terminal,
# unless --progress asks for it.
source "$(dirname "$0")/lib.sh"

"$GEN_EVENTS" --events "$(scaled 1500000)" --seed 8 > events.ndjson

# Not a terminal: no progress line.
ks split -k user_id -n 8 -j 1 -o plain events.ndjson 2> plain.err
if grep -q ' read, ' plain.err; then fail "progress line drawn on a file"; fi
pass "no progress when stderr is a file"

# A pseudo-terminal: the line is drawn, with percent and ETA (the size is known), then cleared.
start=$(date +%s.%N)
script -qefc "'$KEYSHARD' split -k user_id -n 8 -j 1 -o tty events.ndjson" /dev/null > tty.out
elapsed=$(python3 -c "print($(date +%s.%N) - $start)")
grep -q ' read, ' tty.out || fail "no progress line on a terminal: $(head -c 300 tty.out)"
grep -q 'ETA' tty.out || fail "no ETA although the input size is known"
grep -q $'\x1b\\[K' tty.out || fail "the line is never cleared"
grep -q 'lines from 1 input' tty.out || fail "no summary after the progress line"
draws=$(grep -o ' read, ' tty.out | wc -l)
python3 -c "import sys; d, e = $draws, $elapsed; sys.exit(0 if d <= 7 * e + 1 else 1)" ||
  fail "$draws redraws in $elapsed s: more than ~6 a second"
pass "progress on a terminal ($draws redraws in ${elapsed%.*} s)"

# --progress forces it; --no-progress wins on a terminal; -q hides it.
ks split -k user_id -n 8 -j 1 -o forced --progress -q events.ndjson 2> forced.err
grep -q ' read, ' forced.err || fail "--progress did not draw"
script -qefc "'$KEYSHARD' split -k user_id -n 8 -j 1 -o off --no-progress events.ndjson" /dev/null > off.out
if grep -q ' read, ' off.out; then fail "--no-progress drew the line"; fi
run_status ks split -k user_id -n 8 -o both --progress --no-progress events.ndjson
expect_eq "$STATUS" 2 "--progress with --no-progress"
expect_contains "$ERR" "--progress and --no-progress say opposite things: give one" "the refusal"
run_status ks resume --progress --no-progress both
expect_eq "$STATUS" 2 "resume with --progress and --no-progress, before DIR is looked at"
expect_contains "$ERR" "--progress and --no-progress say opposite things" "resume's refusal"
pass "--progress and --no-progress"

# Forced onto a file, each update is a line of its own, and dead letters written to stderr
# (-o -) are never glued to it: every line is a progress line or a whole record.
python3 - events.ndjson > with-bad.ndjson <<'PY'
import sys
for n, line in enumerate(open(sys.argv[1])):
    sys.stdout.write("not json\n" if n % 50000 == 0 else line)
PY
ks split -k user_id -n 8 -j 1 -o - --progress -q with-bad.ndjson 2> mixed.err > /dev/null
python3 - mixed.err <<'PY' || fail "stderr mixes the progress line and the dead letters"
import json, sys
records = progress = 0
for line in open(sys.argv[1], "rb").read().split(b"\n")[:-1]:
    if line.startswith(b"keyshard: ") and b" read, " in line and b"\r" not in line:
        progress += 1
    else:
        json.loads(line)
        records += 1
if records == 0 or progress == 0:
    sys.exit(f"{records} records, {progress} progress lines")
PY
pass "progress and dead letters on one stderr"

# A slow stream's few events are counted one by one, not shown as 0.00 M.
rm -f slow.fifo && mkfifo slow.fifo
"$KEYSHARD" split -k user_id -n 2 -o - --progress -q < slow.fifo > /dev/null 2> slow.err &
pid=$!
exec 8> slow.fifo
head -n 3 events.ndjson >&8
wait_until grep -q ' read, 3 events, ' slow.err || fail "3 events, counted: $(tail -c 300 slow.err)"
exec 8>&-
wait "$pid"
pass "a slow stream's events, counted one by one"

# Into a file, after the first update, one every 5 seconds: a stream quiet for 6 s gives two
# lines, or one when keyshard was slow to start (on a terminal: some 36 redraws).
rm -f quiet.fifo && mkfifo quiet.fifo
"$KEYSHARD" split -k user_id -n 2 -o - --progress -q < quiet.fifo > /dev/null 2> quiet.err &
pid=$!
exec 8> quiet.fifo
sleep 6
exec 8>&-
wait "$pid"
lines=$(grep -c ' read, ' quiet.err || true)
[ "$lines" -ge 1 ] && [ "$lines" -le 2 ] || fail "$lines progress lines into a file over 6 s"
pass "progress into a file: a line every 5 seconds"

# A resumed run gives the rate of its own process: its MB/s times its time is what it read,
# not the whole run's bytes. (The first run reads half of the input from a pipe that then
# stays open, so that it is surely stopped half-way; resume reads the input from the start.)
rm -f half.fifo && mkfifo half.fifo
"$KEYSHARD" split -k user_id -n 8 -j 1 -q --checkpoint-every 4MiB -o halfway < half.fifo &
pid=$!
exec 7> half.fifo
lines=$(wc -l < events.ndjson)
head -n $((lines / 2)) events.ndjson >&7
size=$(stat -c %s events.ndjson)
for _ in $(seq 1 2000); do
  offset=$(grep -o '"offset":[0-9]*' halfway/.keyshard/checkpoint.json 2> /dev/null |
           grep -o '[0-9]*$' | head -n 1)
  [ "${offset:-0}" -gt $((size / 3)) ] && break
  sleep 0.005
done
kill -TERM "$pid"
set +e; wait "$pid"; set -e
exec 7>&-
ks resume -q halfway < events.ndjson
python3 - halfway/keyshard-summary.json <<'PY' || fail "a resumed run's rate"
import json, sys
summary = json.load(open(sys.argv[1]))
read_now = summary["mb_per_second"] * 1e6 * summary["elapsed_seconds"]
if read_now > 0.8 * summary["bytes_read"]:
    sys.exit(f"{read_now:.0f} bytes at the rate given, of {summary['bytes_read']}")
PY
expect_eq "$(summary_field halfway lines_read)" "$lines" "the resumed run read every line"
pass "a resumed run's rate is its own"
