#!/usr/bin/env bash
# The progress line: drawn on a terminal (tested through a pseudo-terminal made by script(1)),
# at most ~6 times a second, cleared before the summary; never when stderr is not a terminal,
# unless --progress asks for it.
source "$(dirname "$0")/lib.sh"

"$GEN_EVENTS" --events "$(scaled 1500000)" --seed 8 > events.ndjson

# Not a terminal: no progress line.
ks split -k user_id -n 8 -j 1 -o plain events.ndjson 2> plain.err
if grep -q 'M events' plain.err; then fail "progress line drawn on a file"; fi
pass "no progress when stderr is a file"

# A pseudo-terminal: the line is drawn, with percent and ETA (the size is known), then cleared.
start=$(date +%s.%N)
script -qefc "'$KEYSHARD' split -k user_id -n 8 -j 1 -o tty events.ndjson" /dev/null > tty.out
elapsed=$(python3 -c "print($(date +%s.%N) - $start)")
grep -q 'M events' tty.out || fail "no progress line on a terminal: $(head -c 300 tty.out)"
grep -q 'ETA' tty.out || fail "no ETA although the input size is known"
grep -q $'\x1b\\[K' tty.out || fail "the line is never cleared"
grep -q 'lines from 1 input' tty.out || fail "no summary after the progress line"
draws=$(grep -o 'M events' tty.out | wc -l)
python3 -c "import sys; d, e = $draws, $elapsed; sys.exit(0 if d <= 7 * e + 1 else 1)" ||
  fail "$draws redraws in $elapsed s: more than ~6 a second"
pass "progress on a terminal ($draws redraws in ${elapsed%.*} s)"

# --progress forces it; --no-progress wins on a terminal; -q hides it.
ks split -k user_id -n 8 -j 1 -o forced --progress -q events.ndjson 2> forced.err
grep -q 'M events' forced.err || fail "--progress did not draw"
script -qefc "'$KEYSHARD' split -k user_id -n 8 -j 1 -o off --no-progress events.ndjson" /dev/null > off.out
if grep -q 'M events' off.out; then fail "--no-progress drew the line"; fi
pass "--progress and --no-progress"
