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

# A slow pipe is not held back: each line fed reaches the output within moments, before the
# next is sent and long before the input ends (-o -, --exec into files, zstd input).
python3 - "$KEYSHARD" <<'PY' || fail "a slow stream is held back"
import os, select, subprocess, sys, tempfile, time
keyshard = sys.argv[1]

def zstd_frame(data):
    return subprocess.run(["zstd", "-q", "-c"], input=data, capture_output=True, check=True).stdout

def feed_and_watch(args, encode, output_of):
    child = subprocess.Popen([keyshard] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        for i in range(3):
            line = b'{"k":"a%d"}\n' % i
            child.stdin.write(encode(line))
            child.stdin.flush()
            deadline = time.monotonic() + 3
            while line not in output_of(child):
                if time.monotonic() > deadline:
                    sys.exit(f"{args}: line {i} not written 3 s after it was fed")
                time.sleep(0.02)
    finally:
        child.stdin.close()
        child.wait()

seen = b""
def stdout_of(child):
    global seen
    while select.select([child.stdout], [], [], 0.05)[0]:
        chunk = os.read(child.stdout.fileno(), 65536)
        if not chunk:
            break
        seen += chunk
    return seen

feed_and_watch(["split", "-q", "-k", "k", "-n", "4", "-o", "-"], lambda b: b, stdout_of)
seen = b""
feed_and_watch(["split", "-q", "-k", "k", "-n", "4", "-o", "-"], zstd_frame, stdout_of)
folder = tempfile.mkdtemp(dir=".")
def files_of(child):
    return b"".join(open(os.path.join(folder, name), "rb").read()
                    for name in os.listdir(folder) if name.startswith("part-"))
feed_and_watch(["split", "-q", "-k", "k", "-n", "4", "--force", "-o", folder, "--exec", "cat"],
               lambda b: b, files_of)
PY
pass "a slow stream is written as it comes"
