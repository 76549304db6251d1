#!/usr/bin/env bash
# Regular files read in place (mapped): the outputs are byte for byte those of a file read with
# read() (which is what a file some program has open for writing gets); a file truncated under
# lines in flight stops the run with an error naming it, never a crash, and the outputs hold
# only whole lines of the file as it was.
source "$(dirname "$0")/lib.sh"

# Whether mapping pays is measured by default, and the answer is the machine's own; these tests
# map whenever the file allows it (KEYSHARD_READ_IN_PLACE=no is tested below).
export KEYSHARD_READ_IN_PLACE=yes

# For the truncation tests: waits until keyshard's reader stands still on `path` (its offset,
# as /proc shows it, unmoved for 0.2 s: every chunk of the pool in flight), however long
# keyshard took to start, or until keyshard has ended (or two minutes have passed).
cat > reader_still.py <<'PY'
import fcntl, os, struct, termios, time

def wait_until_still(run, path):
    target = os.path.realpath(path)

    def position():
        try:
            for fd in os.listdir(f"/proc/{run.pid}/fd"):
                if os.readlink(f"/proc/{run.pid}/fd/{fd}") == target:
                    with open(f"/proc/{run.pid}/fdinfo/{fd}") as info:
                        return int(info.readline().split()[1])
        except OSError:
            pass
        return -1

    last, still = -1, 0
    deadline = time.monotonic() + 120  # (then the test fails on what follows, not hangs)
    while still < 20 and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
        now = position()
        still = still + 1 if now == last and now > 0 else 0
        last = now
    return target


def children(command):
    """The --exec children running `command` (in their own process groups: found by their
    command line)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as line:
                if command.encode() in line.read():
                    found.append(pid)
        except OSError:
            pass
    return found


def wait_for_children(command):
    """Waits (up to 30 s) until no child runs `command` any more."""
    for _ in range(3000):
        if not children(command):
            return
        time.sleep(0.01)


def is_full(pipe):
    unread = struct.unpack("i", fcntl.ioctl(pipe, termios.FIONREAD, bytes(4)))[0]
    return unread >= fcntl.fcntl(pipe, fcntl.F_GETPIPE_SZ)


def wait_until_pipes_full(run, command, count):
    """Waits until `count` children running `command` each have a full pipe on their standard
    input, so that keyshard's write to each waits for it to read (or keyshard has ended, or two
    minutes have passed). Pipes are told apart by inode: a child's shell forks (to sleep) with
    the same command line and pipe."""
    deadline = time.monotonic() + 120
    while run.poll() is None and time.monotonic() < deadline:
        full = set()
        for pid in children(command):
            try:
                with open(f"/proc/{pid}/fd/0", "rb", buffering=0) as pipe:
                    if is_full(pipe):
                        full.add(os.fstat(pipe.fileno()).st_ino)
            except OSError:
                pass
        if len(full) >= count:
            return
        time.sleep(0.01)


def wait_until_stdout_full(run):
    """Waits until keyshard's standard output (a pipe to this script) is full, so that its
    write to it waits (or keyshard has ended, or two minutes have passed)."""
    deadline = time.monotonic() + 120
    while run.poll() is None and time.monotonic() < deadline and not is_full(run.stdout):
        time.sleep(0.01)
PY

# Lines of every kind, in many chunks: lines longer than a chunk, CRLF, empty and bad lines,
# no final newline.
python3 - <<'PY'
import random
random.seed(7)
with open("mixed.ndjson", "w", newline="") as out:
    for i in range(60000):
        kind = i % 997
        if kind == 5:
            out.write('{"user_id":"long","pad":"%s"}\n' % ("x" * 9000))
        elif kind == 6:
            out.write('{"user_id":"crlf%d"}\r\n' % i)
        elif kind == 7:
            out.write("\n")
        elif kind == 8:
            out.write("not json\n")
        else:
            out.write('{"user_id":"u%d","n":%d,"s":"%s"}\n'
                      % (random.randrange(5000), i, "y" * random.randrange(200)))
    out.write('{"user_id":"last"}')
PY

# Whether this system grants read leases, by which keyshard knows that no program writes to a
# file (not on NFS, say, or with fs.leases-enable=0): without, every file is read with read().
leases=$(python3 -c '
import fcntl, os
fd = os.open("mixed.ndjson", os.O_RDONLY)
try:
    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    print(1)
except OSError:
    print(0)')
[ "$leases" = 1 ] || echo "note: no read leases here: every file is read with read()"

# split_both NAME ARGS...: the same split of mixed.ndjson read in place and read with read()
# (the file held open for writing meanwhile), into NAME-mapped and NAME-read.
split_both() {
  local name=$1
  shift
  ks split -v -k user_id -o "$name-mapped" "$@" mixed.ndjson 2> "$name-mapped.err"
  exec 3>>mixed.ndjson
  ks split -v -k user_id -o "$name-read" "$@" mixed.ndjson 2> "$name-read.err"
  exec 3>&-
  # -v says how many chunks were read in place: most (at least half here; not those near the
  # end of the file, nor those holding a line longer than a chunk), or none.
  local chunks mapped
  chunks=$(sed -n 's/.*(\([0-9,]*\) chunks, .*/\1/p' "$name-mapped.err" | tr -d ,)
  mapped=$(sed -n 's/.* chunks, \([0-9,]*\) read in place, .*/\1/p' "$name-mapped.err" | tr -d ,)
  if [ "$leases" = 1 ]; then
    expect_eq "$(( ${mapped:-0} > 0 && 2 * ${mapped:-0} >= ${chunks:-0} ))" 1 \
      "$name: -v counts the chunks read in place ($mapped of $chunks)"
  fi
  expect_contains "$(cat "$name-read.err")" "chunks, none read in place," \
    "$name: -v says no chunk was read in place from a file open for writing"
  local file
  for file in "$name-read"/*; do
    [[ $file == */keyshard-summary.json ]] && continue
    expect_same_file "$name-mapped/${file##*/}" "$file" "$name: ${file##*/} read in place"
  done
  expect_eq "$(cd "$name-mapped" && ls)" "$(cd "$name-read" && ls)" "$name: the same files"
}
split_both small -n 7 --chunk-size 4KiB
split_both default -n 3
split_both annotated -n 5 --chunk-size 64KiB --annotate partition,offset
expect_eq "$(cat small-mapped/part-* | wc -l)" "$(grep -c user_id mixed.ndjson)" \
  "every good line written"

# Standard input redirected from a file is read from where the shell left it (here after a
# header line that `read` took), in place or not.
{ echo '{"user_id":"header, taken by read"}'; cat mixed.ndjson; } > with-header.ndjson
{ read -r _; ks split -q -k user_id -n 7 --chunk-size 4KiB -o stdin-mapped; } < with-header.ndjson
for file in small-read/part-*; do
  expect_same_file "stdin-mapped/${file##*/}" "$file" "standard input after a header: ${file##*/}"
done

# A line longer than --max-line-size, after many chunks: the same error, at the same line.
cp mixed.ndjson overlong.ndjson
python3 -c 'print("{\"user_id\":\"huge\",\"pad\":\"%s\"}" % ("z" * 70000))' >> overlong.ndjson
cat mixed.ndjson >> overlong.ndjson
run_status ks split -q -k user_id -n 3 --chunk-size 4KiB --max-line-size 64KiB -o long-mapped \
  overlong.ndjson
expect_eq "$STATUS" 1 "exit status for a line over --max-line-size: $ERR"
expect_contains "$ERR" "overlong.ndjson:60001: the line is longer than --max-line-size" \
  "the error names the file and the line"
exec 3>>overlong.ndjson
run_status ks split -q -k user_id -n 3 --chunk-size 4KiB --max-line-size 64KiB -o long-read \
  overlong.ndjson
exec 3>&-
expect_eq "$STATUS" 1 "exit status for a line over --max-line-size, read: $ERR"
expect_contains "$ERR" "overlong.ndjson:60001: the line is longer than --max-line-size" \
  "the error names the file and the line, read"
pass "a file read in place gives the outputs and errors of one read with read()"

# A run whose stdout is not read stops with its chunks in flight; the file is truncated under
# them. Mapped, the run must stop with an error that names the file; its stdout holds a prefix
# of the input in whole lines. Held open for writing elsewhere, or with KEYSHARD_READ_IN_PLACE=no,
# it is read with read(): it ends with the truncation warning instead.
"$GEN_EVENTS" --bytes "$(scaled 64)MiB" --seed 3 > events.ndjson
cp events.ndjson original.ndjson
for holder in none writer policy-no; do
  cp original.ndjson events.ndjson
  set +e
  leases=$leases python3 - "$KEYSHARD" "$holder" <<'PY' 2> truncated.err
import os, subprocess, sys
from reader_still import wait_until_stdout_full, wait_until_still
keyshard, holder = sys.argv[1], sys.argv[2]
held = open("events.ndjson", "ab") if holder == "writer" else None
env = dict(os.environ, KEYSHARD_READ_IN_PLACE="no" if holder == "policy-no" else "yes")
run = subprocess.Popen([keyshard, "split", "-q", "-k", "user_id", "-n", "4", "-o", "-",
                        "events.ndjson"], stdout=subprocess.PIPE, env=env)
wait_until_stdout_full(run)
target = wait_until_still(run, "events.ndjson")
with open(f"/proc/{run.pid}/maps") as maps:
    mapped = target in maps.read()
if mapped != (holder == "none" and os.environ["leases"] == "1"):
    sys.exit(f"mapped: {mapped}, with holder {holder}")
os.truncate("events.ndjson", 0)
with open("stdout.ndjson", "wb") as out:
    out.write(run.stdout.read())
sys.exit(run.wait())
PY
  STATUS=$?
  set -e
  ERR=$(cat truncated.err)
  if [ "$holder" = none ] && [ "$leases" = 1 ]; then
    expect_eq "$STATUS" 1 "exit status, truncated under chunks in flight: $ERR"
    expect_contains "$ERR" "keyshard: events.ndjson: the file shrank while it was read" \
      "the error names the file"
  else
    expect_eq "$STATUS" 0 "exit status, truncated while read with read(): $ERR"
    expect_contains "$ERR" "events.ndjson: truncated from" "the warning names the file"
  fi
  size=$(stat -c %s stdout.ndjson)
  [ "$size" -gt 0 ] || fail "$holder: nothing written before the truncation"
  expect_same_file stdout.ndjson <(head -c "$size" original.ndjson) "$holder: a prefix of the input"
  expect_eq "$(tail -c 1 stdout.ndjson | od -An -c | tr -d ' ')" '\n' "$holder: whole lines"
done
pass "a file truncated under lines in flight: an error naming it (mapped) or a warning (read)"

# Any other KEYSHARD_READ_IN_PLACE is a usage error that names it, before anything is read.
for value in maybe YES 1; do
  rm -rf bad-policy
  run_status env KEYSHARD_READ_IN_PLACE="$value" "$KEYSHARD" split -k user_id -n 4 -o bad-policy \
    mixed.ndjson
  expect_eq "$STATUS" 2 "exit status with KEYSHARD_READ_IN_PLACE=$value"
  expect_eq "$ERR" "keyshard: KEYSHARD_READ_IN_PLACE is '$value': use auto (the default), yes or no" \
    "the message for KEYSHARD_READ_IN_PLACE=$value"
  [ ! -e bad-policy ] || fail "KEYSHARD_READ_IN_PLACE=$value: bad-policy was created"
done
# auto (unset or empty) reads in place where the probe finds that it pays, or with read(): the
# same outputs either way.
for value in auto ""; do
  rm -rf "auto-$value"
  KEYSHARD_READ_IN_PLACE=$value ks split -q -k user_id -n 7 --chunk-size 4KiB -o "auto-$value" \
    mixed.ndjson
  for file in small-read/part-*; do
    expect_same_file "auto-$value/${file##*/}" "$file" "KEYSHARD_READ_IN_PLACE='$value': ${file##*/}"
  done
done
pass "KEYSHARD_READ_IN_PLACE: no reads with read(), auto measures, anything else is refused"

# One key only, so that whole runs of lines, each as long as an output buffer, are handed to
# the outputs at once (here --exec children, which read nothing until the file is truncated, so
# that the reader surely stands still with the pool in flight): truncated under them, the
# children still get only whole lines.
if [ "$leases" = 1 ]; then
  python3 -c '
import sys
line = "{\"user_id\":\"hot\",\"pad\":\"%s\"}\n" % ("p" * 200)
sys.stdout.write(line * 200000)' > hot.ndjson
  mkdir children
  set +e
  python3 - "$KEYSHARD" <<'PY' 2> hot.err
import os, shlex, subprocess, sys, time
from reader_still import wait_for_children, wait_until_pipes_full, wait_until_still
here = shlex.quote(os.getcwd())  # (in the command: its children are this test's own)
command = (f"until [ -e {here}/children.go ]; do sleep 0.02; done; "
           f"cat > {here}/children/out.$KEYSHARD_PARTITION")
run = subprocess.Popen([sys.argv[1], "split", "-q", "-k", "user_id", "-n", "64", "-o", "hot-out",
                        "--exec", command, "hot.ndjson"])
wait_until_pipes_full(run, command, 1)  # the hot key's child: its worker waits in a write
wait_until_still(run, "hot.ndjson")  # (the children wait for children.go)
os.truncate("hot.ndjson", 0)
open("children.go", "w").close()
status = run.wait()
wait_for_children(command)
sys.exit(status)
PY
  STATUS=$?
  set -e
  ERR=$(cat hot.err)
  expect_eq "$STATUS" 1 "exit status, truncated under runs of one key: $ERR"
  expect_contains "$ERR" "keyshard: hot.ndjson: the file shrank while it was read" \
    "the error names the file (runs of one key)"
  for file in children/out.*; do
    [ -s "$file" ] || continue
    expect_eq "$(tail -c 1 "$file" | od -An -c | tr -d ' ')" '\n' "$file: whole lines"
    expect_eq "$(sort -u "$file" | wc -l)" 1 "$file: every line as it was"
  done
  pass "a file of one key truncated under runs of lines: the children get whole lines"
fi

# The fault may come while another output's write is under way: here worker 0's child has not
# read its pipe full of hot.ndjson's lines (1.4 MB: more than a pipe and an output buffer, less
# than the pool of chunks) when worker 1's input, cool.ndjson, is truncated and its child starts
# to read, so that worker 1 (or the reader) faults while worker 0 still waits to write the rest
# of a block. keyshard lets that write finish before it ends: the child gets
# whole lines, not a pipe that ends part way through one.
if [ "$leases" = 1 ]; then
  python3 -c '
import sys
sys.stdout.write(("{\"user_id\":\"hot\",\"pad\":\"%s\"}\n" % ("p" * 217)) * 6000)' > hot.ndjson
  python3 -c '
import sys
sys.stdout.write(("{\"user_id\":\"cool\",\"pad\":\"%s\"}\n" % ("c" * 230)) * int(sys.argv[1]))' \
    100000 > cool.ndjson
  expect_eq "$(ks which -n 2 hot cool | tr '\n' ' ')" "0 1 " "hot and cool go to workers 0 and 1"
  mkdir two-workers
  set +e
  python3 - "$KEYSHARD" <<'PY' 2> two.err
import os, shlex, subprocess, sys, time
from reader_still import wait_for_children, wait_until_pipes_full, wait_until_still
here = shlex.quote(os.getcwd())  # (in the command: its children are this test's own)
command = (f"until [ -e {here}/two-workers/go.$KEYSHARD_PARTITION ]; do sleep 0.02; done; "
           f"cat > {here}/two-workers/out.$KEYSHARD_PARTITION")
run = subprocess.Popen([sys.argv[1], "split", "-q", "-k", "user_id", "-n", "2", "-j", "2",
                        "-o", "two-out", "--exec", command, "hot.ndjson", "cool.ndjson"])
wait_until_pipes_full(run, command, 2)  # each worker waits in a write
wait_until_still(run, "cool.ndjson")  # and the pool is in flight, with lines of cool.ndjson
os.truncate("cool.ndjson", 0)
open("two-workers/go.1", "w").close()
time.sleep(1)  # worker 1 (or the reader) faults; worker 0's write still waits for its child
still_running = run.poll() is None
open("two-workers/go.0", "w").close()
status = run.wait()
wait_for_children(command)
print("still running" if still_running else "ended", file=sys.stderr)
sys.exit(status)
PY
  STATUS=$?
  set -e
  ERR=$(cat two.err)
  expect_eq "$STATUS" 1 "exit status, a fault while a write is under way: $ERR"
  expect_contains "$ERR" "keyshard: cool.ndjson: the file shrank while it was read" \
    "the error names the file (a fault while a write is under way)"
  expect_contains "$ERR" "still running" "keyshard waited for the write under way"
  [[ $ERR != *"may end part way through a line"* ]] || fail "a write was said to be cut: $ERR"
  for file in two-workers/out.0 two-workers/out.1; do
    [ -s "$file" ] || fail "$file: nothing written"
    expect_eq "$(tail -c 1 "$file" | od -An -c | tr -d ' ')" '\n' "$file: whole lines"
    expect_eq "$(sort -u "$file" | wc -l)" 1 "$file: every line as it was"
  done
  pass "a fault while another output's write is under way: that write ends first, in whole lines"
fi
