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

# A slow pipe is not held back: each line fed reaches the output while the input is still open,
# before the next is sent (-o -, --exec into files, zstd input). (What shows it is the line
# coming out before stdin ends, not how soon: the deadline is long, as on a slow machine line 0
# also waits for keyshard to start, and with --exec for its children and first checkpoint.)
python3 - "$KEYSHARD" <<'PY' || fail "a slow stream is held back"
import os, select, subprocess, sys, tempfile, time
keyshard = sys.argv[1]

def zstd_frame(data):
    return subprocess.run(["zstd", "-q", "-c"], input=data, capture_output=True, check=True).stdout

def feed_and_watch(args, encode, output_of, lines=[b'{"k":"a%d"}\n' % i for i in range(3)]):
    child = subprocess.Popen([keyshard] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        for i, line in enumerate(lines):
            child.stdin.write(encode(line))
            child.stdin.flush()
            deadline = time.monotonic() + 60
            while line not in output_of(child):
                if time.monotonic() > deadline:
                    sys.exit(f"{args}: line {i} not written 60 s after it was fed")
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
# A first line shorter than a compressor's magic bytes is not held for the bytes after it.
seen = b""
feed_and_watch(["split", "-q", "--format", "line", "-n", "4", "-o", "-"], lambda b: b, stdout_of,
               [b"1\n", b"23\n", b"4\n"])
folder = tempfile.mkdtemp(dir=".")
def files_of(child):
    return b"".join(open(os.path.join(folder, name), "rb").read()
                    for name in os.listdir(folder) if name.startswith("part-"))
feed_and_watch(["split", "-q", "-k", "k", "-n", "4", "--force", "-o", folder, "--exec", "cat"],
               lambda b: b, files_of)
PY
pass "a slow stream is written as it comes"

# SIGTERM or SIGINT: keyshard stops reading and writes out every event it read, so standard
# output ends with a whole line and holds exactly the input up to where it stopped; the status
# is 128 + the signal. With the reader of standard output slow, keyshard is caught mid-write;
# with a quiet pipe, blocked in a read.
python3 - "$KEYSHARD" <<'PY' || fail "an interrupted -o - run"
import os, re, select, signal, subprocess, sys, time
keyshard = sys.argv[1]
source = open("events.ndjson", "rb").read()

def catching(child, sig):  # waits until the child catches the signal (its handler is in place)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with open(f"/proc/{child.pid}/status") as status:
            mask = next(int(l.split()[1], 16) for l in status if l.startswith("SigCgt:"))
        if mask >> (sig - 1) & 1:
            return
        time.sleep(0.01)
    sys.exit("keyshard never caught the signal")

def check(name, child, out, err, expected_status):
    if child.returncode != expected_status:
        sys.exit(f"{name}: status {child.returncode}, expected {expected_status}; stderr: {err!r}")
    if not out.endswith(b"\n") or not source.startswith(out):
        sys.exit(f"{name}: stdout ({len(out)} bytes) is not whole lines of the input from its start")
    lines = out.count(b"\n")
    said = re.search(rb"stopped reading after ([\d,]+) lines?, and wrote out every event", err)
    if not said or said.group(1) != f"{lines:,}".encode():
        sys.exit(f"{name}: {lines} lines written; stderr: {err!r}")

# Caught mid-write: nothing reads standard output until the signal was sent. It is sent once
# keyshard has written something (its pipe is readable; nothing is read from it here), however
# long that takes: it cannot finish meanwhile, as nothing reads its output yet. SIGTERM, and
# SIGHUP (the terminal or ssh session closed, with standard output redirected); each at its
# default when keyshard starts, as this test may run under nohup (see below).
for sig, status in ((signal.SIGTERM, 143), (signal.SIGHUP, 129)):
    child = subprocess.Popen([keyshard, "split", "-k", "user_id", "-n", "8", "-o", "-",
                              "events.ndjson"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             preexec_fn=lambda sig=sig: signal.signal(sig, signal.SIG_DFL))
    catching(child, sig)
    if not select.select([child.stdout], [], [], 60)[0]:
        sys.exit(f"{sig.name} mid-write: keyshard wrote nothing in 60 s")
    child.send_signal(sig)
    time.sleep(0.3)
    out, err = child.communicate(timeout=60)
    check(f"{sig.name} mid-write", child, out, err, status)

# Started with SIGHUP ignored (nohup): keyshard leaves it so, and a SIGHUP does not stop it.
child = subprocess.Popen([keyshard, "split", "-k", "user_id", "-n", "8", "-o", "-",
                          "events.ndjson"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
catching(child, signal.SIGTERM)
with open(f"/proc/{child.pid}/status") as status:
    ignored = next(int(l.split()[1], 16) for l in status if l.startswith("SigIgn:"))
if not ignored >> (signal.SIGHUP - 1) & 1:
    sys.exit("nohup: keyshard no longer ignores SIGHUP")
child.send_signal(signal.SIGHUP)
out, err = child.communicate(timeout=60)
if child.returncode != 0 or out != source:  # (-o - keeps the input's order)
    sys.exit(f"nohup: status {child.returncode}, {len(out)} of {len(source)} bytes; {err!r}")

# Blocked on a quiet pipe, with --exec children that must see the end of their input.
for args in (["-o", "-"], ["-o", "-", "--exec", "cat"]):
    child = subprocess.Popen([keyshard, "split", "-k", "user_id", "-n", "4"] + args,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    first = source[:source.index(b"\n", 1000) + 1]
    catching(child, signal.SIGINT)
    child.stdin.write(first)
    child.stdin.flush()
    early = b""  # the lines fed come out once the pipe is quiet: then it is blocked in a read
    deadline = time.monotonic() + 60
    while early.count(b"\n") < first.count(b"\n") and time.monotonic() < deadline:
        if select.select([child.stdout], [], [], 1)[0]:
            early += os.read(child.stdout.fileno(), 1 << 20)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    out = early + out
    if args[-1] == "cat":  # each child's output arrives whole, in its own order
        out = b"".join(sorted(out.splitlines(keepends=True), key=first.index))
    check(f"SIGINT on a quiet pipe ({' '.join(args)})", child, out, err, 130)
PY
pass "an interrupted run writes out what it read"
