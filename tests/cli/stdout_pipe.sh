#!/usr/bin/env bash
# keyshard ... -o - | head: a closed stdout ends the run quietly with status 0, and lines on
# stdout are never torn.
source "$(dirname "$0")/lib.sh"

"$GEN_EVENTS" --events 300000 --seed 5 > events.ndjson
set +e
ks split -k user_id -n 8 -o - events.ndjson 2> err.txt | head -n 1 > first.txt
statuses=("${PIPESTATUS[@]}")
set -e
expect_eq "${statuses[0]}" 0 "keyshard status when stdout closes early"
expect_eq "$(cat err.txt)" "" "no message when stdout closes early"
expect_eq "$(cat first.txt)" "$(head -n 1 events.ndjson)" "the first line"
pass "closed stdout"

ks split -k user_id -n 8 -j 2 -o - -q events.ndjson | python3 -c '
import json, sys
for n, line in enumerate(sys.stdin, 1):
    json.loads(line)
print(n)' > count.txt
expect_eq "$(cat count.txt)" 300000 "every stdout line is a whole JSON line"
pass "whole lines"
