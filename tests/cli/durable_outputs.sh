#!/usr/bin/env bash
# --commit sync: before each checkpoint, every output file of the run and DIR itself are
# fsynced, file by file, and syncfs() is never called (it would also wait for every other
# program's writes to the same filesystem). --commit async fsyncs no output file. A preloaded
# library (tests/tools/sync_recorder.cc) logs the calls as they return, and makes fsync fail for
# the last checks: of directories (a run goes on) and of one output (the run stops).
source "$TESTS_DIR/cli/lib.sh"
: "${SYNC_RECORDER:?set SYNC_RECORDER to the sync_recorder library}"
# A sanitizer's runtime asks to come first among the libraries; the recorder comes before it.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

# recorded LOG CMD...: runs CMD with the recorder, logging to LOG.
recorded() {
  local log=$1
  shift
  SYNC_LOG="$WORK/$log" LD_PRELOAD="$SYNC_RECORDER" "$@"
}

"$GEN_EVENTS" --events "$(scaled 200000)" --seed 7 > events.ndjson
echo 'not json' >> events.ndjson  # a dead letter

# check_synced LOG DIR PARTITIONS: every checkpoint after the first (the empty start) comes
# after an fsync of each partition file, of the dead-letter file and of DIR since the one
# before; prints how many checkpoints were checked.
check_synced() {
  python3 - "$1" "$2" "$3" <<'PY'
import os, sys
log, out, parts = sys.argv[1], os.path.realpath(sys.argv[2]), int(sys.argv[3])
want = {f"{out}/part-{p:05d}.ndjson" for p in range(parts)} | {f"{out}/dead-letter.ndjson", out}
synced, checkpoints = set(), 0
for line in open(log):
    call, *args = line.split()
    if call == "syncfs":
        sys.exit(f"syncfs called: {line.strip()}")
    if call == "fsync":
        synced.add(args[0])
    if call == "rename" and args[1].endswith("/.keyshard/checkpoint.json"):
        if checkpoints > 0 and not want <= synced:
            sys.exit(f"checkpoint {checkpoints + 1} written before an fsync of: "
                     + ", ".join(sorted(want - synced)[:5]))
        checkpoints += 1
        synced.clear()
print(checkpoints)
PY
}

# Periodic checkpoints (every MiB) and the last one.
recorded sync.log "$KEYSHARD" split -q -k user_id -n 40 -o out --checkpoint-every 1MiB events.ndjson
checkpoints=$(check_synced sync.log out 40 2>&1) || fail "$checkpoints"
[ "$checkpoints" -ge 3 ] || fail "expected a periodic checkpoint, got $checkpoints in all"

# The summary, written at the end, is as durable as the last checkpoint that counts on it: its
# file is fsynced before it is renamed into place, and DIR after that, before the checkpoint.
python3 - sync.log out <<'PY' || fail "the summary is not made durable before the last checkpoint"
import os, sys
log, out = sys.argv[1], os.path.realpath(sys.argv[2])
calls = [line.split() for line in open(log)]
def first(test, after=-1):
    return next(i for i, call in enumerate(calls) if i > after and test(call))
summary_synced = first(lambda c: c[0] == "fsync" and c[1] == f"{out}/keyshard-summary.json.tmp")
renamed = first(lambda c: c[0] == "rename" and c[2].endswith("/keyshard-summary.json"),
                summary_synced)
dir_synced = first(lambda c: c[0] == "fsync" and c[1] == out, renamed)
last = max(i for i, c in enumerate(calls)
           if c[0] == "rename" and c[2].endswith("/.keyshard/checkpoint.json"))
assert dir_synced < last, (dir_synced, last)
PY
# More partitions than make_durable gives one thread: the same, fsyncs from several threads.
recorded many.log "$KEYSHARD" split -q -k user_id -n 600 -o many --checkpoint-every 4MiB \
  events.ndjson
checkpoints=$(check_synced many.log many 600 2>&1) || fail "$checkpoints"
[ "$checkpoints" -ge 2 ] || fail "expected at least two checkpoints, got $checkpoints"

# A resumed run: the files it continues are synced before its checkpoints too.
head -n 1000 events.ndjson > first.ndjson
recorded resumed-first.log "$KEYSHARD" split -q -k user_id -n 8 -o resumed --incremental \
  first.ndjson
cp events.ndjson first.ndjson
recorded resumed.log "$KEYSHARD" split -q -k user_id -n 8 -o resumed --incremental \
  --checkpoint-every 1MiB first.ndjson
checkpoints=$(check_synced resumed.log resumed 8 2>&1) || fail "$checkpoints"
[ "$checkpoints" -ge 3 ] || fail "expected a periodic checkpoint after resuming, got $checkpoints"

# --on-bad skip makes no dead-letter file, even with --dead-letter elsewhere: none is synced.
head -n 20000 events.ndjson > some.ndjson
echo 'not json' >> some.ndjson
run_status recorded skip.log "$KEYSHARD" split -q -k user_id -n 4 -o skip --on-bad skip \
  --dead-letter "$WORK/elsewhere.ndjson" --checkpoint-every 1MiB some.ndjson
expect_eq "$STATUS" 0 "--on-bad skip with --dead-letter elsewhere: exit status ($ERR)"
expect_contains "$ERR" "under --on-bad skip none is written, so it changes nothing" \
  "--on-bad skip with --dead-letter: the warning"
[ ! -e elsewhere.ndjson ] || fail "--on-bad skip made a dead-letter file"
! grep -q elsewhere skip.log || fail "--on-bad skip: a dead-letter file was synced"
[ "$(grep -c '^rename .*/\.keyshard/checkpoint.json$' skip.log)" -ge 2 ] ||
  fail "--on-bad skip: expected checkpoints"$'\n'"$(cat skip.log)"

# --commit async: the checkpoints are still written safely, but no output file is fsynced.
recorded async.log "$KEYSHARD" split -q -k user_id -n 40 -o async --commit async \
  --checkpoint-every 1MiB events.ndjson
[ "$(grep -c '^rename .*/\.keyshard/checkpoint.json$' async.log)" -ge 3 ] ||
  fail "async: expected a periodic checkpoint"$'\n'"$(cat async.log)"
expect_eq "$(grep -cE '^(fsync|fdatasync) .*/(part-[0-9]+|dead-letter)\.ndjson$' async.log || true)" \
  0 "async: no output file fsynced"
expect_eq "$(grep -c '^syncfs ' async.log || true)" 0 "async: no syncfs"
expect_eq "$(grep -c '^fsync .*keyshard-summary' async.log || true)" 0 "async: no summary fsync"

# A filesystem that cannot fsync a directory (EINVAL or EBADF, as some FUSE and network ones
# answer) does not stop a run: DIR's entries are as durable as it makes them, and the outputs
# and the checkpoints are as on any other.
for error in EINVAL EBADF; do
  rm -rf "nodirsync-$error"
  run_status recorded "nodirsync-$error.log" env SYNC_FAIL_DIRECTORIES=$error "$KEYSHARD" \
    split -q -k user_id -n 40 -o "nodirsync-$error" --checkpoint-every 1MiB events.ndjson
  expect_eq "$STATUS" 0 "directories that cannot be fsynced ($error): exit status ($ERR)"
  for f in out/part-*.ndjson out/dead-letter.ndjson; do
    expect_same_file "nodirsync-$error/${f#out/}" "$f" "no directory fsync ($error)"
  done
  log="nodirsync-$error.log" real=$(realpath "nodirsync-$error")
  checkpoints=$(grep -c '^rename .*/\.keyshard/checkpoint.json$' "$log" || true)
  [ "$checkpoints" -ge 3 ] || fail "no directory fsync ($error): expected checkpoints"
  # DIR before each checkpoint after the first, DIR/.keyshard after each: all tried, all failed.
  [ "$(grep -c "^fsync-failed $real $error\$" "$log" || true)" -ge $((checkpoints - 1)) ] ||
    fail "no directory fsync ($error): DIR was not tried before each checkpoint"$'\n'"$(cat "$log")"
  [ "$(grep -c "^fsync-failed $real/\.keyshard $error\$" "$log" || true)" -ge "$checkpoints" ] ||
    fail "no directory fsync ($error): DIR/.keyshard was not tried after each checkpoint"
done
run_status "$KEYSHARD" verify nodirsync-EINVAL
expect_eq "$STATUS" 0 "verify of a run whose directory fsyncs failed ($ERR)"
pass "a filesystem that cannot fsync a directory: the run ends well, its outputs the same"

# A file whose fsync fails (EIO: the disk lost the writes) stops the run before the next
# checkpoint, naming the file and the reason; that checkpoint is never written.
run_status recorded eio.log env SYNC_FAIL_FILE=/part-00003.ndjson "$KEYSHARD" split -q \
  -k user_id -n 8 -o eio --checkpoint-every 1MiB events.ndjson
expect_eq "$STATUS" 1 "an fsync that fails: exit status"
expect_contains "$ERR" "keyshard: eio/part-00003.ndjson: fsync failed: Input/output error" \
  "the message names the file and the reason"
expect_contains "$ERR" "once that is fixed, \`keyshard resume eio\` continues the run" "what to do"
expect_eq "$(grep -c '^rename .*/\.keyshard/checkpoint.json$' eio.log || true)" 1 \
  "only the checkpoint at the start, written before any output"
run_status "$KEYSHARD" resume -q eio
expect_eq "$STATUS" 0 "resume once the disk is well ($ERR)"
"$KEYSHARD" split -q -k user_id -n 8 -o eio-reference events.ndjson
for f in eio-reference/part-*.ndjson eio-reference/dead-letter.ndjson; do
  expect_same_file "eio/${f#eio-reference/}" "$f" "resumed after a failed fsync"
done
pass "an output whose fsync fails stops the run, naming it; no checkpoint counts it; resume ends it"

# A signal during the last sync, once the whole input was read: the run finishes, complete, and
# says that the signal came too late to stop it.
run_status recorded late.log env SYNC_SIGNAL_FILE=/part-00005.ndjson "$KEYSHARD" split -q \
  -k user_id -n 8 -o late --checkpoint-every off events.ndjson
expect_eq "$STATUS" 0 "SIGTERM during the last sync: exit status"
grep -q '^signal SIGTERM at fsync .*/late/part-00005.ndjson$' late.log ||
  fail "SIGTERM during the last sync: the signal was not sent"
expect_contains "$ERR" "warning: SIGTERM came once the whole input was read, so the run \
finished: it is complete" "SIGTERM during the last sync: the warning"
grep -q '"complete": true' late/.keyshard/checkpoint.json ||
  fail "SIGTERM during the last sync: the checkpoint is not complete"
pass "a signal during the last sync: the run completes and says so"

# Whole blocks written past the page cache (where the filesystem takes direct I/O: statx reports
# its alignments) are waited for before each checkpoint. With each direct write made 50 ms slow,
# every checkpoint still counts only bytes its files held when they were fsynced before it.
recorded slow.log env SYNC_SLOW_DIRECT_MS=50 SYNC_RECORD_SIZES=1 SYNC_KEEP_CHECKPOINTS=1 \
  SYNC_RECORD_CACHED=1 "$KEYSHARD" split -q -k user_id -n 4 -o slow --checkpoint-every 4MiB \
  events.ndjson
# Lines of 256 bytes, all of one key: each MiB of input fills its partition's buffer exactly, so
# at each checkpoint the last write of that file was a direct one, and nothing is left to write.
python3 -c '
import sys
line = "{\"user_id\":\"hot\",\"pad\":\"" + "x" * 229 + "\"}\n"
assert len(line) == 256
sys.stdout.write(line * 4096 * 6)' > even.ndjson
recorded even.log env SYNC_SLOW_DIRECT_MS=50 SYNC_RECORD_SIZES=1 SYNC_KEEP_CHECKPOINTS=1 \
  "$KEYSHARD" split -q -k user_id -n 2 -o even --checkpoint-every 1MiB even.ndjson
direct_io=$(python3 - "$WORK/events.ndjson" <<'PY'
import ctypes, os, sys
# statx(AT_FDCWD, a file, 0, STATX_DIOALIGN): the mask says whether its filesystem reports the
# alignments (for a regular file only).
libc = ctypes.CDLL(None, use_errno=True)
buffer = ctypes.create_string_buffer(256)
ok = libc.syscall(332, -100, sys.argv[1].encode(), 0, 0x2000, buffer) == 0
mask = int.from_bytes(buffer.raw[0:4], "little")
offset_align = int.from_bytes(buffer.raw[156:160], "little")
print("yes" if ok and mask & 0x2000 and 0 < offset_align <= 4096 else "no")
PY
)
# check_direct LOG DIR: each checkpoint counts only bytes its files held at their last fsync, and
# (where the filesystem takes direct I/O) no write through the page cache held 256 KiB of whole
# pages.
check_direct() {
  python3 - "$1" "$2" "$direct_io" <<'PY' || fail "$2: see the line above"
import json, os, sys
log, out, direct_io = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[3]
size_at_sync, checked, direct_writes = {}, 0, 0
for line in open(log):
    call, *args = line.split()
    if call == "fsync-size":
        size_at_sync[args[0]] = int(args[1])
    elif call == "direct-write":
        direct_writes += 1
    elif call == "cached-write" and direct_io == "yes":
        # Through the page cache: never 256 KiB of whole pages or more, which go direct (what
        # a checkpoint writes out included: only its last piece of a page goes this way).
        path, offset, size = args[0], int(args[1]), int(args[2])
        head = -offset % 4096
        pages = max(0, size - head) // 4096 * 4096
        if pages >= 256 << 10:
            sys.exit(f"{path}: {size} bytes at {offset} went through the page cache, "
                     f"{pages} of them whole pages")
    elif call == "checkpoint-copy":
        checkpoint = json.load(open(args[0]))
        for output in checkpoint["outputs"]:
            path = f"{out}/{output['file']}"
            if output["size"] > 0 and size_at_sync.get(path, 0) < output["size"]:
                sys.exit(f"checkpoint {checked + 1} counts {output['size']} bytes of {path}, "
                         f"which held {size_at_sync.get(path, 0)} at its last fsync")
        checked += 1
if checked < 4:
    sys.exit(f"expected periodic checkpoints, got {checked}")
if direct_io == "yes" and direct_writes < 4:
    sys.exit(f"the filesystem takes direct I/O, yet only {direct_writes} direct writes were made")
print(f"{out}: {checked} checkpoints, {direct_writes} direct writes (direct I/O here: {direct_io})")
PY
}
check_direct slow.log slow
check_direct even.log even
# Whole pages go direct however a buffer fills: 256-byte lines of five keys, where a
# checkpoint's pages can end a buffer (the next full buffer then ends on a MiB of its file
# all the same); and -n 1, whose buffer takes a chunk's lines at a time, past any MiB.
python3 -c '
import random, sys
rng = random.Random(5)
for _ in range(10 * 4096):
    line = "{\"user_id\":\"u%d\",\"pad\":\"" % rng.randrange(5)
    sys.stdout.write(line + "x" * (256 - len(line) - 3) + "\"}\n")' > five.ndjson
recorded five.log env SYNC_SLOW_DIRECT_MS=0 SYNC_RECORD_SIZES=1 SYNC_KEEP_CHECKPOINTS=1 \
  SYNC_RECORD_CACHED=1 "$KEYSHARD" split -q -k user_id -n 8 -o five --checkpoint-every 64KiB \
  five.ndjson
recorded one.log env SYNC_SLOW_DIRECT_MS=0 SYNC_RECORD_SIZES=1 SYNC_KEEP_CHECKPOINTS=1 \
  SYNC_RECORD_CACHED=1 "$KEYSHARD" split -q -k user_id -n 1 -o one --checkpoint-every 4MiB \
  events.ndjson
check_direct five.log five
check_direct one.log one
"$KEYSHARD" split -q -k user_id -n 4 -o slow-reference --commit async events.ndjson
for f in slow-reference/part-*.ndjson slow-reference/dead-letter.ndjson; do
  expect_same_file "slow/${f#slow-reference/}" "$f" "slow direct writes, against --commit async"
done
cat even/part-*.ndjson > even-joined.ndjson
expect_same_file even-joined.ndjson even.ndjson "one key's lines, each MiB written direct"
"$KEYSHARD" split -q -k user_id -n 8 -o five-reference --commit async five.ndjson
for f in five-reference/part-*.ndjson; do
  expect_same_file "five/${f#five-reference/}" "$f" "five keys, against --commit async"
done
grep -v '^not json$' events.ndjson > events-good.ndjson
expect_same_file one/part-00000.ndjson events-good.ndjson "-n 1: every line"
pass "direct writes are in their files before each checkpoint that counts them"

# --force over a finished run: the earlier checkpoint is removed, and its directory synced,
# before any of that run's files, so that a run killed meanwhile never leaves a checkpoint (one
# that says the run is complete) naming files that are gone.
"$KEYSHARD" split -q -k user_id -n 8 -o forced events.ndjson
recorded forced.log env SYNC_RECORD_UNLINKS=1 "$KEYSHARD" split -q --force -k user_id -n 4 \
  --on-bad skip -o forced events.ndjson
python3 - forced.log forced <<'PY' || fail "--force removes the checkpoint first"
import os, sys
log, out = sys.argv[1], os.path.realpath(sys.argv[2])
calls = [line.split() for line in open(log)]
def first(call, path):
    return next((i for i, c in enumerate(calls) if c[:1] == [call] and
                 os.path.realpath(c[1]) == os.path.realpath(path)), None)
gone = first("unlink", f"{out}/.keyshard/checkpoint.json")
synced = next((i for i, c in enumerate(calls) if i > (gone or 0) and c[0] == "fsync" and
               c[1] == f"{out}/.keyshard"), None)
assert gone is not None and synced is not None, calls[:20]
removed = [first("unlink", f"{out}/{name}") for name in
           ("part-00004.ndjson", "part-00007.ndjson", "dead-letter.ndjson", "keyshard-summary.json")]
assert None not in removed, (removed, calls[:20])
assert gone < synced < min(removed), (gone, synced, removed)
PY
"$KEYSHARD" verify -q forced || fail "verify after --force over a finished run"
pass "--force removes the earlier checkpoint, durably, before the earlier run's files"

echo "durable_outputs: ok"
