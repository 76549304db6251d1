#!/usr/bin/env bash
# --incremental from cron: a log that is appended to (a line half-written at one run is read
# whole at the next), rotated (rename + new file, with lines still landing in the old one),
# copy-truncated and rewritten between runs, plus a new file; the outputs after all the runs
# equal one split over the same lines in the order they were read.
source "$(dirname "$0")/lib.sh"

"$GEN_EVENTS" --events "$(scaled 60000)" --seed 31 > all.ndjson
total=$(wc -l < all.ndjson)
piece=$((total / 8))
segment() { sed -n "$(($1 * piece + 1)),$((($1 + 1) * piece))p" all.ndjson; }
options=(-k user_id -n 8 -q --incremental -o out)
: > expected.ndjson

# expect_each_line_once ALL DIR WHAT: DIR's partition files hold the lines of ALL, each once
# (in any order: the runs read the files in another order than ALL lists them).
expect_each_line_once() {
  rm -rf once-ref
  ks split -k user_id -n 8 -q -o once-ref "$1"
  for f in once-ref/part-*.ndjson; do
    sort "$f" > want.sorted
    sort "$2/$(basename "$f")" > got.sorted
    expect_same_file got.sorted want.sorted "$3"
  done
}

# expect_outputs_hold DIR WHAT FILE...: the partition files of DIR hold the lines of the FILEs,
# each once (in any order across partitions).
expect_outputs_hold() {
  local dir=$1 what=$2
  shift 2
  cat "$@" | sort > want.sorted
  cat "$dir"/part-*.ndjson | sort > got.sorted
  expect_same_file got.sorted want.sorted "$what"
}

run() {
  run_status ks split "${options[@]}" "$@"
  [ "$STATUS" -eq 0 ] || fail "incremental run $*: status $STATUS: $ERR"
}

# Run 1: a log whose last line is still being written.
segment 0 > app.log
last=$(segment 1 | sed -n 1p)
printf '%s' "${last:0:20}" >> app.log
run app.log
segment 0 >> expected.ndjson
expect_eq "$(summary_field out lines_read)" "$piece" "run 1 leaves the unterminated line"

# Run 2: the line is finished and more is appended.
printf '%s\n' "${last:20}" >> app.log
segment 1 | tail -n +2 >> app.log
run app.log
segment 1 >> expected.ndjson
expect_eq "$(summary_field out lines_read)" "$piece" "run 2 reads only what was appended"
segment 1 > run2.ndjson
python3 - out/keyshard-summary.json run2.ndjson <<'PY' || \
  fail "run 2's heaviest keys are counted over its own events"
import collections, json, sys
summary = json.load(open(sys.argv[1]))
counts = collections.Counter(json.loads(line)["user_id"] for line in open(sys.argv[2]))
bound = summary["top_keys_error_bound"]
assert bound <= len(open(sys.argv[2]).readlines()) // 257, bound
for top in summary["top_keys"]:
    assert counts[top["key"]] - bound <= top["events"] <= counts[top["key"]], (top, bound)
PY

# Run 3: rotated. Lines still land in the old file after the rename; the new file starts.
mv app.log app.log.1
segment 2 >> app.log.1
segment 3 > app.log
run app.log
segment 2 >> expected.ndjson
segment 3 >> expected.ndjson
expect_eq "$(summary_field out lines_read)" "$((2 * piece))" "run 3 finishes the rotated file"

# Run 4: nothing new.
run app.log
expect_eq "$(summary_field out lines_read)" 0 "run 4 has nothing to read"
expect_eq "$(python3 -c 'import json; print(len(json.load(open("out/keyshard-summary.json"))["top_keys"]))')" \
  0 "run 4 lists no heaviest keys"

# Run 5: copy-truncate (logrotate's copytruncate), then new lines, longer than before.
cp app.log app.log.2
: > app.log
segment 4 > app.log
segment 5 >> app.log
run app.log
expect_contains "$ERR" "app.log: its bytes before the recorded position differ; reading it again" \
  "a copy-truncated file is reread with a warning"
segment 4 >> expected.ndjson
segment 5 >> expected.ndjson

# Run 6: rewritten in place, shorter than the recorded offset; and a second, new file.
segment 6 > app.log
segment 7 > other.log
run app.log other.log
expect_contains "$ERR" "app.log: it is shorter than the recorded position" \
  "a truncated file is reread with a warning"
segment 6 >> expected.ndjson
segment 7 >> expected.ndjson

# The outputs equal one split over the same lines.
ks split -k user_id -n 8 -q -o oneshot expected.ndjson
for f in oneshot/part-*.ndjson; do
  expect_same_file "out/$(basename "$f")" "$f" "after six incremental runs"
done
ks verify -q out
pass "appended, rotated, copy-truncated, rewritten and new files: same as one split"

# The options that shape the outputs must match the last run's.
run_status ks split -k user_id -n 16 -q --incremental -o out app.log
expect_eq "$STATUS" 2 "an incremental run with another -n"
expect_contains "$ERR" "--partitions 8 then, 16 now" "the differing option is named"
run_status ks split -k user_id -n 8 -q --incremental -o out -
expect_eq "$STATUS" 2 "--incremental from stdin"
mkfifo events.fifo
run_status timeout 10 "$KEYSHARD" split -k user_id -n 8 -q --incremental -o fifo-out events.fifo
expect_eq "$STATUS" 2 "--incremental from a FIFO (refused before it is opened, so no hang)"
expect_contains "$ERR" '"events.fifo" is a FIFO, which has no place to continue from' \
  "the FIFO is named"
[ ! -e fifo-out ] || fail "a refused --incremental run created its DIR"
run_status timeout 10 "$KEYSHARD" split -k user_id -n 8 -q --incremental -o fifo-out /dev/null
expect_eq "$STATUS" 2 "--incremental from a character device"
expect_contains "$ERR" '"/dev/null" is not a regular file' "the device is named"
run_status ks split -k user_id -n 8 -q -o out app.log
expect_eq "$STATUS" 2 "a split without --incremental into a finished incremental run's DIR"
expect_contains "$ERR" \
  "holds the outputs of a finished run: start over with --force, or add to them with --incremental" \
  "says the two ways on (nothing is left to resume)"
# ... and the other way round: a finished split made without --incremental cannot be added to,
# nor resumed.
ks split -k user_id -n 8 -q -o plain app.log
run_status ks split -k user_id -n 8 -q --incremental -o plain app.log
expect_eq "$STATUS" 2 "--incremental into a finished split made without it"
expect_contains "$ERR" "finished split without --incremental, which cannot be added to: start \
over with --force" "says the way on"
[[ "$ERR" != *"keyshard resume"* ]] || fail "no resume hint for a finished run: $ERR"
pass "an incremental run set up differently is refused"

# ... compared as they act: a tab typed as a tab, "\t" or "tab" is one delimiter.
printf 'a\tb\n' > tabs.tsv
ks split -q --incremental --format delimited -k 1 -n 2 -o tabs-out tabs.tsv
for spelling in "$(printf '\t')" tab '\t'; do
  printf '%s\tx\n' "$spelling" >> tabs.tsv
  run_status ks split -q --incremental --format delimited --delimiter "$spelling" -k 1 -n 2 \
    -o tabs-out tabs.tsv
  expect_eq "$STATUS" 0 "--incremental with the tab spelt another way: $ERR"
done
expect_eq "$(cat tabs-out/part-*.ndjson | wc -l)" 4 "every line of the four runs, once"
run_status ks split -q --incremental --format delimited --delimiter , -k 1 -n 2 -o tabs-out \
  tabs.tsv
expect_eq "$STATUS" 2 "--incremental with another delimiter"
printf '{"user_id":"u1"}\n' > json-one.ndjson
ks split -q --incremental -k user_id -n 2 -o json-out json-one.ndjson
run_status ks split -q --incremental --delimiter , -k user_id -n 2 -o json-out json-one.ndjson
expect_eq "$STATUS" 0 "--delimiter changes nothing with --format json: $ERR"
expect_eq "$ERR" "keyshard: warning: --delimiter changes nothing with --format json: it splits \
the fields of --format delimited, which is to be given too" "and says so, once"
pass "--incremental compares --delimiter as it acts"

# ... as they act, not as they are spelt: an alias, a default spelt out, a size in other units,
# --annotate fields in another order, a key as a JSON Pointer, the default dead-letter file
# named and --name's argument by number are the same options.
printf '{"user_id":"a"}\n' > spelt.log
ks split -k user_id -n 8 -q --incremental --hash kafka --compress zstd --hot-keys auto \
  --max-line-size 64MiB --annotate partition,offset --name 'p-{partition:03}-{{x}}.zst' \
  -o spelt spelt.log
printf '{"user_id":"b"}\n' >> spelt.log
run_status ks split -k /user_id -n 8 -q --incremental --hash murmur2 --compress zstd:3 \
  --hot-keys auto:2% --max-line-size 67108864 --annotate offset,partition -o spelt \
  --name 'p-{0:03}-{{x}}.zst' --dead-letter "$PWD/spelt/./dead-letter.ndjson" spelt.log
expect_eq "$STATUS" 0 "the same options spelt otherwise: $ERR"
run_status ks split -k user_id -n 8 -q --incremental --hash crc32 --compress zstd \
  --hot-keys auto --annotate partition,offset --name 'p-{:03}-{{x}}.zst' -o spelt spelt.log
expect_eq "$STATUS" 2 "another partitioner"
expect_contains "$ERR" '--hash "murmur2" then, "crc32" now' "the difference, as it acts"
run_status ks split -k user_id -n 8 -q --incremental --compress zstd --hot-keys auto \
  --annotate partition,offset --name 'p-{0:04}-{{x}}.zst' -o spelt spelt.log
expect_eq "$STATUS" 2 "another --name"
expect_contains "$ERR" '--name "p-{partition:03}-{{x}}.zst" then, "p-{partition:04}-{{x}}.zst" now' \
  "--name as it acts"
# ... a number with leading zeros is that number, and --name templates that name every file alike
# are one --name.
printf '{"user_id":"a"}\n' > zeros.log
ks split -k user_id -n 4 -q --incremental --missing-key partition:2 --salt a:3 \
  --name 'p{partition:03}' -o zeros zeros.log
printf '{"user_id":"b"}\n' >> zeros.log
run_status ks split -k user_id -n 4 -q --incremental --missing-key partition:02 --salt a:03 \
  --name 'p{partition:03d}' -o zeros zeros.log
expect_eq "$STATUS" 0 "partition:02, a:03 and {partition:03d} as they act: $ERR"
expect_eq "$(cat zeros/p00? | wc -l)" 2 "both runs' events"
run_status ks split -k user_id -n 4 -q --incremental --missing-key partition:02 --salt a:03 \
  --name 'p{partition:02d}' -o zeros zeros.log
expect_eq "$STATUS" 2 "a --name that names the files otherwise"
expect_contains "$ERR" '--name "p{partition:03d}" then, "p{partition:02d}" now' \
  "--name as the last run gave it"
run_status ks split -k user_id -n 4 -q --incremental --missing-key partition:1 --salt a:03 \
  --name 'p{partition:03}' -o zeros zeros.log
expect_eq "$STATUS" 2 "another --missing-key partition"
expect_contains "$ERR" '--missing-key "partition:2" then, "partition:1" now' "--missing-key as it acts"

# A hot key salted by an earlier run is named with the input it was salted in, however this
# run's inputs are listed, and as an earlier input once that file is gone.
python3 - <<'PY'
with open("hot-a.ndjson", "w") as f:
    for i in range(20000):
        f.write('{"user_id":"%s"}\n' % ("X" if i % 10 == 0 else "u%d" % i))
with open("hot-b.ndjson", "w") as f:
    for i in range(100):
        f.write('{"user_id":"v%d"}\n' % i)
PY
hot_run() { run_status ks split --incremental -k user_id -n 4 --hot-keys auto:5% -o hot "$@"; }
hot_run hot-a.ndjson
expect_contains "$ERR" 'hot key "X" salted over 4 sub-keys from hot-a.ndjson byte ' "first run"
hot_run hot-b.ndjson hot-a.ndjson
expect_contains "$ERR" 'salted over 4 sub-keys from hot-a.ndjson byte ' "listed second"
hot_run hot-b.ndjson
expect_contains "$ERR" 'salted over 4 sub-keys from hot-a.ndjson byte ' "carried over"
rm hot-a.ndjson
hot_run hot-b.ndjson
expect_eq "$STATUS" 0 "after the salted input is gone: $ERR"
expect_contains "$ERR" "salted over 4 sub-keys from an earlier run's input, gone since, byte " \
  "gone"
python3 - hot/keyshard-summary.json <<'PY' || fail "a gone input has no name in the summary file"
import json, sys
[decision] = json.load(open(sys.argv[1]))["hot_keys_salted"]
assert decision["input"] is None, decision
PY
hot_run hot-b.ndjson
expect_eq "$STATUS" 0 "its checkpoint reads back: $ERR"
pass "options are compared as they act"

# A crash in an incremental run: the next run continues from its last checkpoint exactly.
rm -rf out expected.ndjson
segment 0 > grow.log
ks split -k user_id -n 8 -q --incremental -o out grow.log
for k in 1 2 3 4 5 6 7; do segment "$k"; done >> grow.log
"$KEYSHARD" split -k user_id -n 8 -q --incremental --chunk-size 64KiB --checkpoint-every 128KiB \
  -o out grow.log &
pid=$!
sleep 0.05
kill -KILL "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
ks split -k user_id -n 8 -q --incremental -o out grow.log
ks split -k user_id -n 8 -q -o grow-ref grow.log
for f in grow-ref/part-*.ndjson; do
  expect_same_file "out/$(basename "$f")" "$f" "an incremental run after a crashed one"
done
pass "a crashed incremental run is continued exactly by the next"

# A log written anew whole (a copy put in its place: another inode), beginning with the bytes
# the last run read, is read on after them, not again from its start.
rm -rf out && segment 0 > copied.log
ks split -k user_id -n 2 -q --incremental -o out copied.log
{ cat copied.log; segment 1; } > copied.tmp && mv copied.tmp copied.log
run_status ks split -k user_id -n 2 -q --incremental -o out copied.log
expect_contains "$ERR" "copied.log: is another file since the last run (written anew, as by sed -i \
or an editor), beginning with the" "the warning"
ks split -k user_id -n 2 -q -o copied-ref copied.log
for f in copied-ref/part-*.ndjson; do
  expect_same_file "out/$(basename "$f")" "$f" "a log written anew, read on"
done
pass "a log written anew with the lines read before is read on after them"

# A partition file moved elsewhere and replaced by a link to it is continued where the link
# leads (checked as the file), and verify reads it there; --force replaces the link.
rm -rf out moved && mkdir moved
segment 0 > linked.log
ks split -k user_id -n 2 -q --incremental -o out linked.log
mv out/part-00000.ndjson moved/part-00000.ndjson
ln -s ../moved/part-00000.ndjson out/part-00000.ndjson
segment 1 >> linked.log
ks split -k user_id -n 2 -q --incremental -o out linked.log
ks split -k user_id -n 2 -q -o linked-ref linked.log
expect_same_file moved/part-00000.ndjson linked-ref/part-00000.ndjson "the file the link leads to"
expect_eq "$(readlink out/part-00000.ndjson)" "../moved/part-00000.ndjson" "the link kept"
run_status ks verify -q out
expect_eq "$STATUS" 0 "verify through the link"
ks split -k user_id -n 2 -q --force -o out linked.log
[[ -L out/part-00000.ndjson ]] && fail "--force wrote through the link"
expect_same_file moved/part-00000.ndjson linked-ref/part-00000.ndjson "the moved file untouched"
pass "a partition file replaced by a link to it is continued through the link"

# A crash while finishing a rotated file: the next run (given only the new path) finishes the
# rotated file first, then the new one. The kill must land while the rotated file is read; on
# a busy machine the run may finish first, so the crash is set up again (up to 10 times).
landed=no
for _attempt in $(seq 1 10); do
  rm -rf out
  segment 0 > rot.log
  ks split -k user_id -n 8 -q --incremental -o out rot.log
  mv rot.log rot.log.1
  for k in 1 2 3 4 5 6; do segment "$k"; done >> rot.log.1
  segment 7 > rot.log
  "$KEYSHARD" split -k user_id -n 8 -q --incremental --chunk-size 64KiB \
    --checkpoint-every 128KiB -o out rot.log &
  pid=$!
  for _ in $(seq 1 400); do
    grep -q '"complete": false' out/.keyshard/checkpoint.json 2>/dev/null && break
    sleep 0.002
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  if grep -q '"path":"rot.log.1"' out/.keyshard/checkpoint.json &&
    grep -q '"complete": false' out/.keyshard/checkpoint.json; then
    landed=yes
    break
  fi
done
[ "$landed" = yes ] || fail "the kill did not land while the rotated file was being read (10 tries)"
ks split -k user_id -n 8 -q --incremental -o out rot.log
cat rot.log.1 rot.log > rot-all.ndjson
ks split -k user_id -n 8 -q -o rot-ref rot-all.ndjson
for f in rot-ref/part-*.ndjson; do
  expect_same_file "out/$(basename "$f")" "$f" "a crash while finishing a rotated file"
done
pass "a crash while finishing a rotated file: the next run finishes it, then the new file"

# A file missing at one run (between a rotation's rename and the new file, say) is skipped with
# a warning, its position kept: when it is back, the next run continues it, without repeats.
rm -rf out
segment 0 > a.log
segment 1 > b.log
ks split -k user_id -n 8 -q --incremental -o out a.log b.log
mv b.log b.hidden
segment 2 >> a.log
run_status ks split -k user_id -n 8 -q --incremental -o out a.log b.log
expect_eq "$STATUS" 0 "an incremental run with a missing file"
expect_contains "$ERR" "b.log: not found; skipped this time" "the missing file is named"
mv b.hidden b.log
segment 3 >> b.log
ks split -k user_id -n 8 -q --incremental -o out a.log b.log
{ segment 0; segment 1; segment 2; segment 3; } > missing-all.ndjson
expect_each_line_once missing-all.ndjson out "a file missing for one run: every line once"
pass "a file missing for one run is skipped with a warning and continued later"

# ... the first run too (a cron job started before its log exists): the next run reads it.
rm -rf first-missing not-yet.log
run_status ks split -k user_id -n 8 -q --incremental -o first-missing not-yet.log
expect_eq "$STATUS" 0 "a first incremental run whose file does not exist yet"
expect_contains "$ERR" "not-yet.log: not found; skipped this time" "the first run's warning"
segment 0 > not-yet.log
ks split -k user_id -n 8 -q --incremental -o first-missing not-yet.log
expect_each_line_once not-yet.log first-missing "a file missing at the first run, read later"
pass "a file missing at the first incremental run is read once it exists"

# A file that cannot be looked at for another reason than not existing (here a symlink loop;
# for other users, a directory without search permission) is not taken for a missing one: the
# run stops before it reads or writes anything, naming the file and why, first run or later.
rm -rf looped app.log other.log
segment 0 > other.log
ln -s app.log app.log
run_status ks split -k user_id -n 8 -q --incremental -o looped other.log app.log
expect_eq "$STATUS" 1 "a first incremental run with an input that cannot be looked at"
expect_contains "$ERR" "app.log: cannot look at it: Too many levels of symbolic links" \
  "the first run names the file and why"
[ -z "$(find looped -name 'part-*' 2> /dev/null)" ] || fail "the refused first run wrote outputs"
rm app.log
segment 1 > app.log
ks split -k user_id -n 8 -q --incremental -o looped other.log app.log
cp looped/.keyshard/checkpoint.json checkpoint.before
mv app.log app.saved
ln -s app.log app.log
segment 2 >> other.log
run_status ks split -k user_id -n 8 -q --incremental -o looped other.log app.log
expect_eq "$STATUS" 1 "a later incremental run with an input that cannot be looked at"
expect_contains "$ERR" "app.log: cannot look at it: Too many levels of symbolic links" \
  "a later run names the file and why"
expect_same_file looped/.keyshard/checkpoint.json checkpoint.before \
  "the refused later run leaves the checkpoint as it was"
rm app.log
mv app.saved app.log
segment 3 >> app.log
ks split -k user_id -n 8 -q --incremental -o looped other.log app.log
{ segment 0; segment 1; segment 2; segment 3; } > looped-all.ndjson
expect_each_line_once looped-all.ndjson looped "after the fix, every line once"
# So does a directory named by mistake: it never becomes one of the files the run records (a
# later run would take it for a rotated file gone from its directory).
mkdir logs.d
cp looped/.keyshard/checkpoint.json checkpoint.before
segment 4 >> app.log
run_status ks split -k user_id -n 8 -q --incremental -o looped other.log logs.d
expect_eq "$STATUS" 1 "an incremental run given a directory"
expect_eq "$ERR" "keyshard: logs.d: is a directory" "names it, and says no more"
expect_same_file looped/.keyshard/checkpoint.json checkpoint.before \
  "the refused run leaves the checkpoint as it was"
run_status ks split -k user_id -n 8 -q --incremental -o looped other.log app.log
expect_eq "$STATUS:$ERR" "0:" "the next run, the directory left out, warns of nothing"
{ segment 0; segment 1; segment 2; segment 3; segment 4; } > looped-all.ndjson
expect_each_line_once looped-all.ndjson looped "after a directory was named, every line once"
pass "an input that cannot be looked at, or is a directory, stops an incremental run"

# An output that is not what the checkpoint records (the dead-letter file removed, a partition
# file edited) stops the next run; the hint says what can go on from there, not "once fixed".
rm -rf gone gone.log
{ segment 0; echo 'not json'; } > gone.log
ks split -k user_id -n 8 -q --incremental -o gone gone.log
rm gone/dead-letter.ndjson
segment 1 >> gone.log
run_status ks split -k user_id -n 8 -q --incremental -o gone gone.log
expect_eq "$STATUS" 1 "a run after the dead-letter file was removed"
expect_contains "$ERR" \
  "gone/dead-letter.ndjson: cannot open to continue: No such file or directory (it was removed" \
  "the removed dead-letter file is named"
expect_contains "$ERR" "put the file back as it was, or start over with --force" \
  "the hint for an output removed since the checkpoint"
[[ $ERR != *"once that is fixed"* ]] || fail "a removed output is not something to fix: $ERR"
rm -rf gone
ks split -k user_id -n 8 -q --incremental -o gone gone.log
first=$(ls gone/part-*.ndjson | head -n 1)
sed -i '$s/user/USER/' "$first"  # (a run re-reads only the last, incomplete 64 KiB block)
segment 2 >> gone.log
run_status ks split -k user_id -n 8 -q --incremental -o gone gone.log
expect_eq "$STATUS" 1 "a run after a partition file was edited"
expect_contains "$ERR" "$first: was changed since the checkpoint (its content hash differs)" \
  "the edited partition file is named"
expect_contains "$ERR" "put the file back as it was, or start over with --force" \
  "the hint for an output changed since the checkpoint"
pass "an output removed or changed since the checkpoint: the next run says what can go on"

# Bytes added to an output after a run ended are someone else's: the next run refuses to go on
# rather than cut them (bytes after the checkpoint of an interrupted run are its own; see the
# crash tests).
rm -rf gone
ks split -k user_id -n 8 -q --incremental -o gone gone.log
printf 'a note of my own\n' >> gone/dead-letter.ndjson
cp gone/dead-letter.ndjson dead-letter.kept
cp gone/.keyshard/checkpoint.json checkpoint.before
segment 3 >> gone.log
run_status ks split -k user_id -n 8 -q --incremental -o gone gone.log
expect_eq "$STATUS" 1 "a run after bytes were added to an output"
expect_contains "$ERR" "gone/dead-letter.ndjson: holds $(stat -c %s dead-letter.kept) bytes, more \
than the $(( $(stat -c %s dead-letter.kept) - 17 )) the last run left in it: bytes were added after \
that run ended" "the output that grew is named"
expect_contains "$ERR" "put the file back as it was, or start over with --force" \
  "the hint for an output that grew"
expect_same_file gone/dead-letter.ndjson dead-letter.kept "the added bytes are kept"
expect_same_file gone/.keyshard/checkpoint.json checkpoint.before "the checkpoint is kept"
truncate -s -17 gone/dead-letter.ndjson
ks split -k user_id -n 8 -q --incremental -o gone gone.log
expect_each_line_once gone.log gone "once the file is put back, every line once"
pass "bytes added to an output after a run ended stop the next run; nothing is cut"

# A file is known by what it is, not by how it is named: another spelling of its path, a file
# left out of one run and named again later, the same file named twice. Each line once.
rm -rf out
mkdir -p named
segment 0 > named/a.log
segment 1 > named/b.log
ks split -k user_id -n 8 -q --incremental -o out named/a.log named/b.log
segment 2 >> named/a.log
run_status ks split -k user_id -n 8 --incremental -o out ./named/../named/a.log
expect_eq "$(summary_field out lines_read)" "$piece" "another spelling of a.log reads only what was appended"
segment 3 >> named/b.log
ks split -k user_id -n 8 -q --incremental -o out "$PWD/named/a.log"
expect_eq "$(summary_field out lines_read)" 0 "b.log left out: a.log has nothing new"
expect_eq "$(python3 -c 'import json; print(json.load(open("out/keyshard-summary.json"))["inputs"])')" \
  "['$PWD/named/a.log']" "the summary names only the input given"
segment 4 >> named/a.log
run_status ks split -k user_id -n 8 --incremental -o out named/a.log named/b.log ./named/a.log \
  named/b.log
expect_eq "$STATUS" 0 "a run naming a.log twice"
expect_contains "$ERR" "./named/a.log: the same file as named/a.log; read once" "the second name is named"
expect_contains "$ERR" "named/b.log: named twice; read once" "the same name twice"
expect_eq "$(summary_field out lines_read)" "$((2 * piece))" "b.log continues where it was left; a.log is read once"
{ segment 0; segment 1; segment 2; segment 3; segment 4; } > named-all.ndjson
expect_each_line_once named-all.ndjson out "files named in other ways: every line once"
pass "inputs are known by file, not by name: every line once"

# So in the first run, before any checkpoint: another spelling and a hard link are read once.
rm -rf first-named && mkdir first-named
segment 0 > first-named/a.log
ln first-named/a.log first-named/linked.log
run_status ks split -k user_id -n 8 --incremental -o first-out first-named/a.log \
  ./first-named/a.log first-named/linked.log first-named/a.log
expect_eq "$STATUS" 0 "a first run naming a.log four times"
expect_contains "$ERR" "first-named/a.log: named twice; read once" "the same name twice"
expect_contains "$ERR" "./first-named/a.log: the same file as first-named/a.log; read once" \
  "another spelling is named"
expect_contains "$ERR" "first-named/linked.log: the same file as first-named/a.log; read once" \
  "a hard link is named"
expect_eq "$(summary_field first-out lines_read)" "$piece" "the first run reads a.log once"
expect_each_line_once first-named/a.log first-out "the first run: every line once"
pass "the first run reads a file named twice once"

# After a rotation, another spelling of the path still finds the rotated file; a run from
# another directory still knows the files named before; a file renamed and named under both
# names is read once.
rm -rf spelled && mkdir spelled && cd spelled
printf '{"k":"1"}\n{"k":"2"}\n' > app.log
ks split -q --incremental -k k -n 1 -o out app.log
printf '{"k":"3"}\n' >> app.log && mv app.log app.log.1 && printf '{"k":"4"}\n' > app.log
ks split -q --incremental -k k -n 1 -o out ./app.log
expect_eq "$(tr -d '\n' < out/part-00000.ndjson)" '{"k":"1"}{"k":"2"}{"k":"3"}{"k":"4"}' \
  "a rotation, then the path spelled another way"
printf '{"k":"b1"}\n' > b.log
ks split -q --incremental -k k -n 1 -o out ./app.log b.log
(cd / && ks split -q --incremental -k k -n 1 -o "$WORK/spelled/out" "$WORK/spelled/app.log")
(cd / && ks split -q --incremental -k k -n 1 -o "$WORK/spelled/out" "$WORK/spelled/app.log" \
  "$WORK/spelled/b.log")
expect_eq "$(tr -d '\n' < out/part-00000.ndjson)" '{"k":"1"}{"k":"2"}{"k":"3"}{"k":"4"}{"k":"b1"}' \
  "runs from another directory"
mv b.log b.log.renamed
run_status ks split -q --incremental -k k -n 1 -o out app.log b.log b.log.renamed
expect_eq "$(grep -c b1 out/part-00000.ndjson)" 1 "a renamed file named under both names"
cd "$WORK"
pass "files found again after a rotation, from another directory, and renamed"

# An interrupted --incremental run: the next run, naming the file another way, continues it and
# holds its unfinished last line; a file missing from the interrupted run does not stop resume.
# interrupt_run ARGS...: starts a split, and once it has read 1 MiB past where the last run
# ended in its first input (or in that file rotated: the input's name with a suffix), stops it,
# sends ^C and lets it go on, so that the ^C lands mid-run
# however fast the machine. (Not by its first checkpoint: on a slow disk, that checkpoint's sync
# of the whole filesystem may land after the run has read everything.) Sets STATUS.
interrupt_run() {
  set +e
  python3 - "$KEYSHARD" "$@" <<'PY' 2> interrupted.err
import json, os, signal, subprocess, sys, time
first = sys.argv[2]
with open("out/.keyshard/checkpoint.json") as text:
    recorded = [i["offset"] for i in json.load(text)["inputs"] if i["path"] == first]
start = (max(recorded) if recorded else 0) + (1 << 20)
target = os.path.realpath(first)
run = subprocess.Popen([sys.argv[1], "split", "-q", "--incremental", "--checkpoint-every", "1MiB",
                        "-k", "user_id", "-n", "4", "-o", "out"] + sys.argv[2:])

def position():  # where the run reads the first input (or it rotated), if it has it open
    for fd in os.listdir(f"/proc/{run.pid}/fd"):
        if os.readlink(f"/proc/{run.pid}/fd/{fd}").startswith(target):
            with open(f"/proc/{run.pid}/fdinfo/{fd}") as info:
                return int(info.readline().split()[1])
    return 0

while run.poll() is None:  # polled closely
    try:
        if position() > start:
            break
    except OSError:  # (the run ended meanwhile, or the fd closed)
        pass
    time.sleep(0.0005)
for sig in (signal.SIGSTOP, signal.SIGINT, signal.SIGCONT):
    try:
        run.send_signal(sig)
    except ProcessLookupError:
        pass
sys.exit(run.wait())
PY
  STATUS=$?
  set -e
  [ "$STATUS" -eq 0 ] || [ "$STATUS" -eq 130 ] ||
    fail "interrupted run: status $STATUS: $(cat interrupted.err)"
}
rm -rf cut && mkdir cut && cd cut
"$GEN_EVENTS" --bytes "$(scaled 40)MiB" --seed 5 > big.log
printf '{"user_id":"s1"}\n' > small.log
ks split -q --incremental -k user_id -n 4 -o out big.log small.log
rm small.log
# (A busy machine may let a run finish before the ^C: then more is appended and it is tried again.)
for attempt in 1 2 3 4 5; do
  "$GEN_EVENTS" --bytes "$(scaled $((40 * attempt)))MiB" --seed "$((10 + attempt))" >> big.log
  interrupt_run big.log small.log
  [ "$STATUS" -eq 130 ] && break
done
expect_eq "$STATUS" 130 "a ^C mid-run (5 tries)"
run_status ks resume -q out
expect_eq "$STATUS" 0 "resume of an interrupted --incremental run whose file was missing: $ERR"
for attempt in 1 2 3 4 5; do
  "$GEN_EVENTS" --bytes "$(scaled $((40 * attempt)))MiB" --seed "$((20 + attempt))" >> big.log
  printf '{"user_id":"last","v":"par' >> big.log
  interrupt_run big.log
  [ "$STATUS" -eq 130 ] && break
  printf 'ted"}\n' >> big.log  # the run finished: the line is completed, and it is tried again
done
expect_eq "$STATUS" 130 "a ^C mid-run (5 tries)"
ks split -q --incremental -k user_id -n 4 -o out ./big.log
printf 'tial"}\n' >> big.log
ks split -q --incremental -k user_id -n 4 -o out ./big.log
expect_eq "$(cat out/dead-letter.ndjson 2>/dev/null | wc -l)" 0 "no line cut in two"
expect_eq "$(cat out/part-* | grep -c '"partial"')" 1 "the unfinished line, once finished, is written once"
expect_eq "$(cat out/part-* | wc -l)" "$(( $(wc -l < big.log) + 1 ))" "every line once"
cd "$WORK"
pass "an interrupted --incremental run, continued under another name"

# resume of an interrupted --incremental run that carried a file over (not named this time)
# neither reads nor shows that file: the summary names only the input the run was given.
rm -rf carry && mkdir carry && cd carry
"$GEN_EVENTS" --bytes "$(scaled 20)MiB" --seed 31 > big.log
printf '{"user_id":"s1"}\n' > small.log
ks split -q --incremental -k user_id -n 4 -o out big.log small.log
for attempt in 1 2 3 4 5; do
  "$GEN_EVENTS" --bytes "$(scaled $((40 * attempt)))MiB" --seed "$((40 + attempt))" >> big.log
  interrupt_run big.log
  [ "$STATUS" -eq 130 ] && break
done
expect_eq "$STATUS" 130 "a ^C mid-run (5 tries)"
run_status ks resume out
expect_eq "$STATUS" 0 "resume: $ERR"
expect_eq "$(python3 -c 'import json; print(json.load(open("out/keyshard-summary.json"))["inputs"])')" \
  "['big.log']" "the resumed run's summary names only the input given"
[[ "$ERR" != *"small.log"* ]] || fail "the carried file is not shown: $ERR"
expect_outputs_hold out "every line once after the resume" big.log small.log
cd "$WORK"
pass "resume of an --incremental run that carried a file over"

# An interrupted --incremental run, finished by resume or by the next run, sums up what was read
# since the last run that finished: the interrupted part counts, the runs before it do not.
for route in resume next-run; do
  rm -rf "own-$route" && mkdir "own-$route" && cd "own-$route"
  "$GEN_EVENTS" --events 1000 --seed 61 > big.log
  echo 'not json' >> big.log
  ks split -q --incremental -k user_id -n 4 -o out big.log
  done_lines=$(wc -l < big.log)
  done_bad=1
  for attempt in 1 2 3 4 5; do
    "$GEN_EVENTS" --bytes "$(scaled $((40 * attempt)))MiB" --seed "$((60 + attempt))" |
      awk '{ print } NR % 5000 == 0 { print "not json" }' >> big.log
    interrupt_run big.log
    [ "$STATUS" -eq 130 ] && break
    done_lines=$(wc -l < big.log)
    done_bad=$(grep -c '^not json$' big.log)
  done
  expect_eq "$STATUS" 130 "a ^C mid-run (5 tries, $route)"
  if [ "$route" = resume ]; then
    ks resume -q out
  else
    ks split -q --incremental --checkpoint-every 1MiB -k user_id -n 4 -o out big.log
  fi
  python3 - out/keyshard-summary.json "$(($(wc -l < big.log) - done_lines))" \
    "$(($(grep -c '^not json$' big.log) - done_bad))" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
assert summary["lines_read"] == int(sys.argv[2]), (summary["lines_read"], sys.argv[2])
assert summary["dead_lettered"] == int(sys.argv[3]), (summary["dead_lettered"], sys.argv[3])
PY
  grep -v '^not json$' big.log > good.log
  expect_outputs_hold out "every line once ($route)" good.log
  cd "$WORK"
done
pass "an interrupted incremental run's summary: the numbers since the last finished run"

# logrotate with `rotate 1`: `mv app.log app.log.1` deletes the old app.log.1, and the file
# system may give its inode to the new app.log. The new file is still a new file: the one
# rotated away is finished first.
rm -rf reuse && mkdir reuse && cd reuse
numbered() { python3 -c 'import sys
for i in range(int(sys.argv[1]), int(sys.argv[2])): print("{\"user_id\":\"u%d\",\"n\":%d}" % (i % 7, i))' "$@"; }
numbered 0 100 > app.log
ks split -q --incremental -k user_id -n 2 -o out app.log
for round in 1 2 3; do
  numbered $((round * 200 - 100)) $((round * 200)) >> app.log
  mv app.log app.log.1
  numbered $((round * 200)) $((round * 200 + 100)) > app.log
  ks split -q --incremental -k user_id -n 2 -o out app.log
  expect_eq "$(cat out/part-*.ndjson | wc -l)" "$((round * 200 + 100))" \
    "rotation $round: every line once (the rotated file's tail included)"
done
# The same when the file rotated away was recorded empty (logrotate rotates empty logs too):
# an empty record tells nothing about the new file.
: > empty.log
ks split -q --incremental -k user_id -n 2 -o out-empty empty.log
mv empty.log empty.log.1
numbered 0 100 > empty.log
ks split -q --incremental -k user_id -n 2 -o out-empty empty.log
numbered 100 150 >> empty.log
mv empty.log empty.log.1
numbered 150 180 > empty.log
ks split -q --incremental -k user_id -n 2 -o out-empty empty.log
expect_eq "$(cat out-empty/part-*.ndjson | wc -l)" 180 "after an empty file's rotation: every line once"
cd "$WORK"
pass "a new file with a deleted file's inode is a new file"

# stopped_while_finishing_rotated DIR SEED: in a new DIR (entered), a log is read, grows, is
# rotated to big.log.1 and replaced by a new big.log; then a run is stopped by ^C while it
# finishes big.log.1 (set up again, bigger, if the run finished first). Sets STATUS.
stopped_while_finishing_rotated() {
  for attempt in 1 2 3 4 5; do
    rm -rf "$1" && mkdir "$1" && cd "$1"
    "$GEN_EVENTS" --events 1000 --seed "$2" > big.log
    ks split -q --incremental -k user_id -n 4 -o out big.log
    "$GEN_EVENTS" --bytes "$(scaled $((40 * attempt)))MiB" --seed "$(($2 + 1))" >> big.log
    mv big.log big.log.1
    "$GEN_EVENTS" --events 1000 --seed "$(($2 + 2))" > big.log
    interrupt_run big.log
    [ "$STATUS" -eq 130 ] && return
    cd "$WORK"
  done
}

# A run stopped while finishing a rotated file, which the next rotation renames again: the
# next run finds it under its new name and finishes it.
stopped_while_finishing_rotated again 51
expect_eq "$STATUS" 130 "a ^C while finishing the rotated file (5 tries)"
mv big.log.1 big.log.2
run_status ks split -q --incremental -k user_id -n 4 -o out big.log
expect_eq "$STATUS" 0 "the next run: $ERR"
expect_outputs_hold out "every line once, the renamed file finished" big.log.2 big.log
cd "$WORK"
pass "a rotated file being finished, renamed again, is finished"

# The same, and the new file the stopped run had not opened yet is rotated too. It was known by
# its inode from the start, so the next run finds it under its new name: each line once. resume
# continues the same files only: it refuses, pointing to the next --incremental run, and writes
# nothing.
stopped_while_finishing_rotated twice 61
expect_eq "$STATUS" 130 "a ^C while finishing the rotated file (5 tries)"
expect_contains "$(cat interrupted.err)" "(or the next --incremental run)" \
  "the ^C message names both ways on"
mv big.log.1 big.log.2
mv big.log big.log.1
"$GEN_EVENTS" --events 1000 --seed 64 > big.log
cat out/part-*.ndjson | sort > before-resume.sorted
run_status ks resume -q out
expect_eq "$STATUS" 1 "resume after a rotation"
# (The ^C lands while big.log.1 is finished, or, on a slow machine, just after, in big.log: both
# are rotated since.)
[[ "$ERR" =~ big\.log(\.1)?": is another file than the one the interrupted run was reading" ]] ||
  fail "resume names the rotated file: $ERR"
expect_contains "$ERR" "run the next \`keyshard split --incremental\`" "and says what to run"
cat out/part-*.ndjson | sort > after-resume.sorted
expect_same_file after-resume.sorted before-resume.sorted "a refused resume writes nothing"
run_status ks split -q --incremental -k user_id -n 4 -o out big.log
expect_eq "$STATUS" 0 "the next run: $ERR"
expect_outputs_hold out "every line once, both rotated files finished" big.log.2 big.log.1 big.log
cd "$WORK"
pass "a stopped run's files, rotated twice: resume refuses, the next run reads every line once"

# A file rotated while the run reads the inputs before it: it is left to the next run, which
# finishes the rotated file, then reads the new one. Each line once. The run is held on the
# first input by --exec children that read nothing until told: keyshard's buffers (some
# 12 MiB) fill long before the 40 MB first input is read.
#
# start_held_run SEED: a 40 MB first.log and a 100-line app.log, and such a run over them in the
# background ($running, options in $held); returns once its first checkpoint is written (its
# inputs are planned).
start_held_run() {
  "$GEN_EVENTS" --bytes 40000000 --seed "$1" > first.log
  numbered 0 100 > app.log
  held=(-q --incremental -k user_id -n 2 -o out
        --exec "while [ ! -e '$PWD/go' ]; do sleep 0.05; done; exec cat")
  "$KEYSHARD" split "${held[@]}" first.log app.log 2> midrun.err &
  running=$!
  for _ in $(seq 600); do
    [ -e out/.keyshard/checkpoint.json ] && break
    sleep 0.05
  done
}
# next_run_finishes_rotation WHAT: the run after a held one, over app.log, writes every line of
# first.log, app.log.1 (the file rotated away) and app.log once.
next_run_finishes_rotation() {
  run_status ks split "${held[@]}" app.log
  expect_eq "$STATUS" 0 "the next run: $ERR"
  expect_outputs_hold out "every line once: $1" first.log app.log.1 app.log
}
mkdir -p midrun && cd midrun
start_held_run 73
mv app.log app.log.1
numbered 100 200 > app.log
touch go
wait "$running" || fail "the run during the rotation: $(cat midrun.err)"
expect_contains "$(cat midrun.err)" "app.log: rotated since this run started" "the warning"
next_run_finishes_rotation "the rotated file, then the new one"
cd "$WORK"
pass "a file rotated before its turn in a run is read by the next, rotated file first"

# ... and one caught between a rotation's rename and its new file, at its turn: the run goes on
# without it (it used to stop, with "cannot open"), and the next finishes the rotated file.
mkdir -p midrun-gap && cd midrun-gap
start_held_run 75
mv app.log app.log.1
touch go
wait "$running" || fail "the run during the gap: $(cat midrun.err)"
expect_contains "$(cat midrun.err)" "app.log: gone since this run started (rotated?); the next \
--incremental run reads it where it is found then" "the warning"
numbered 100 200 > app.log
next_run_finishes_rotation "the rotated file, then the new one"
cd "$WORK"
pass "a file gone at its turn in a run is read by the next, rotated file first"

# ... and one that an earlier run read part of, rotated at its turn with lines it gained since:
# the next run finishes the rotated file from where that run stopped, then reads the new one.
mkdir -p midrun-continued && cd midrun-continued
"$GEN_EVENTS" --bytes 40000000 --seed 76 > first.log
numbered 0 100 > app.log
held=(-q --incremental -k user_id -n 2 -o out
      --exec "while [ ! -e '$PWD/go' ]; do sleep 0.05; done; exec cat")
touch go
ks split "${held[@]}" app.log || fail "the first run"
rm go
numbered 100 150 >> app.log
"$KEYSHARD" split "${held[@]}" first.log app.log 2> midrun.err &
running=$!
wait_until grep -q first.log out/.keyshard/checkpoint.json || fail "the held run never planned"
mv app.log app.log.1
numbered 150 250 > app.log
touch go
wait "$running" || fail "the run during the rotation: $(cat midrun.err)"
expect_contains "$(cat midrun.err)" "app.log: rotated since this run started" "the warning"
next_run_finishes_rotation "the rotated file's tail, then the new one"
cd "$WORK"
pass "a file continued, rotated at its turn in a run, is finished by the next"

# Rotated twice while a run is held on an earlier input: the file in the middle changed before
# that run's end, but after it looked at its inputs. The next run names it.
mkdir -p midrun-twice && cd midrun-twice
start_held_run 74
sleep 0.05  # (file times tick in steps of a few ms)
mv app.log app.log.1 && numbered 100 200 > app.log
mv app.log.1 app.log.2 && mv app.log app.log.1 && numbered 200 300 > app.log
touch go
wait "$running" || fail "the run during the rotations: $(cat midrun.err)"
run_status ks split "${held[@]}" app.log
expect_eq "$STATUS" 0 "the next run: $ERR"
expect_contains "$ERR" "app.log.1: changed since the last run and read by none" "the warning"
expect_outputs_hold out "the first file, the rotated file and the new one" \
  first.log app.log.2 app.log
cd "$WORK"
pass "a file rotated in and out during a run is named by the next run"

# Rotated twice between two runs: the file in the middle was never the one at the path when a
# run looked. It is named in a warning; an older rotation is not, nor the file finished.
mkdir -p middle && cd middle
numbered 0 100 > app.log
numbered 900 910 > app.log.9
touch -d '2 days ago' app.log.9
numbered 950 960 > app.log.err  # another log, not a rotation of this one
run_status ks split -q --incremental -k user_id -n 2 -o out app.log
expect_eq "$STATUS" 0 "the first run: $ERR"
sleep 0.05  # (file times tick in steps of a few ms)
numbered 100 150 >> app.log
numbered 960 970 >> app.log.err
mv app.log app.log.1 && numbered 150 200 > app.log
mv app.log.1 app.log.2 && mv app.log app.log.1 && numbered 200 250 > app.log
run_status ks split -q --incremental -k user_id -n 2 -o out app.log
expect_eq "$STATUS" 0 "the run after two rotations: $ERR"
expect_contains "$ERR" "app.log.1: changed since the last run and read by none; if app.log was \
rotated more than once since then, it holds lines of app.log that no run reads" "the warning"
[[ "$ERR" != *app.log.9* && "$ERR" != *app.log.2* && "$ERR" != *app.log.err* ]] ||
  fail "only the file in the middle is named: $ERR"
expect_outputs_hold out "the rotated file is finished and the new one read" app.log.2 app.log
cd "$WORK"
pass "a file rotated in and out between two runs is named in a warning"

# logrotate's compress + delaycompress: each rotation compresses the rotation before the newest,
# a file some run finished. A new compressed file is no file in the middle: no warning.
mkdir -p delayed && cd delayed
numbered 0 100 > app.log
run_status ks split -q --incremental -k user_id -n 2 -o out app.log
expect_eq "$STATUS" 0 "the first run: $ERR"
sleep 0.05
numbered 100 150 >> app.log
mv app.log app.log.1 && numbered 150 200 > app.log
run_status ks split -q --incremental -k user_id -n 2 -o out app.log
expect_eq "$STATUS" 0 "the run after the first rotation: $ERR"
expect_eq "$ERR" "" "no warning after one rotation"
sleep 0.05
numbered 200 250 >> app.log
gzip -c app.log.1 > app.log.2.gz && rm app.log.1
mv app.log app.log.1 && numbered 250 300 > app.log
run_status ks split -q --incremental -k user_id -n 2 -o out app.log
expect_eq "$STATUS" 0 "the run after the second rotation: $ERR"
expect_eq "$ERR" "" "no warning: the compressed rotation holds lines already read"
expect_eq "$(cat out/part-*.ndjson | sort | uniq | wc -l)" 300 "every line"
expect_eq "$(cat out/part-*.ndjson | wc -l)" 300 "each once"
cd "$WORK"
pass "logrotate delaycompress: the compressed rotation is not named"

# A run killed before its first checkpoint leaves its outputs holding nothing: the next run
# (a cron job's next --incremental run) starts there without --force.
mkdir -p early/out/.keyshard && cd early
"$GEN_EVENTS" --events 1000 --seed 71 > app.log
touch out/.keyshard/lock out/.keyshard/checkpoint.json.tmp out/dead-letter.ndjson
touch out/part-00000.ndjson.zst
printf '' | zstd -q -c > out/part-00001.ndjson.zst
run_status ks split -q --incremental --compress zstd -k user_id -n 2 -o out app.log
expect_eq "$STATUS" 0 "a run over the leftovers of one killed before its first checkpoint: $ERR"
expect_eq "$(zstd -dc out/part-*.ndjson.zst | wc -l)" 1000 "every line"
printf '{"user_id":"x"}\n' | zstd -q -c > kept.zst
mkdir -p used && cp kept.zst used/part-00001.ndjson.zst
run_status ks split -q --compress zstd -k user_id -n 2 -o used app.log
expect_eq "$STATUS" 2 "an output that holds events is not written over without --force"
cd "$WORK"
pass "the leftovers of a run killed before its first checkpoint"

# A rotated zstd input is followed like a plain one.
rm -rf zrot && mkdir zrot && cd zrot
numbered 0 100 | zstd -q > app.zst
ks split -q --incremental -k user_id -n 2 -o out app.zst
numbered 100 200 | zstd -q >> app.zst
mv app.zst app.zst.1
numbered 200 300 | zstd -q > app.zst
run_status ks split -q --incremental -k user_id -n 2 -o out app.zst
expect_eq "$STATUS" 0 "a rotated zstd input: $ERR"
expect_eq "$ERR" "" "no warning: the rotated file is in its directory"
expect_eq "$(cat out/part-*.ndjson | wc -l)" 300 "a rotated zstd input: every line once"
cd "$WORK"
pass "a rotated zstd input is finished"

# A .zst still being written (its last frame not complete yet) is read up to its last whole
# line, with a warning; the next run reads on from there once the frame is complete. A rotated
# file being finished does not grow: an incomplete frame in it is still an error.
rm -rf zgrow && mkdir zgrow && cd zgrow
numbered 0 2000 | zstd -q > app.zst
numbered 2000 6000 | zstd -q > second.zst
half=$(($(stat -c %s second.zst) / 2))
head -c "$half" second.zst >> app.zst
run_status ks split -q --incremental -k user_id -n 2 -o out app.zst
expect_eq "$STATUS" 0 "a zstd input whose last frame is not complete: $ERR"
expect_contains "$ERR" "app.zst: ends inside a zstd frame (still being written?)" \
  "the incomplete frame is named"
read_first=$(cat out/part-*.ndjson | wc -l)
((read_first >= 2000 && read_first < 6000)) || fail "the first run read $read_first lines"
tail -c +$((half + 1)) second.zst >> app.zst
numbered 6000 7000 | zstd -q >> app.zst
run_status ks split -q --incremental -k user_id -n 2 -o out app.zst
expect_eq "$STATUS" 0 "the run after the frame was completed: $ERR"
numbered 0 7000 > all-grown.ndjson
ks split -q -k user_id -n 2 -o once all-grown.ndjson
for f in once/part-*.ndjson; do
  expect_same_file "out/$(basename "$f")" "$f" "a grown zstd input: every line once, in order"
done
head -c "$half" second.zst > cut.zst
run_status ks split -q -k user_id -n 2 -o plain cut.zst
expect_eq "$STATUS" 1 "without --incremental an incomplete frame is an error"
expect_contains "$ERR" "truncated zstd input" "the error says why"
cd "$WORK"
pass "a zstd input still being written is read on by the next run"

# An --incremental run's summary counts its own events salted by --hot-keys auto, as it counts
# everything else: the runs' counts add up to those of one run over the whole file.
python3 - > hot-all.ndjson <<'PY'
import random
rng = random.Random(1)
for i in range(100000):
    key = "hot" if rng.random() < 0.3 else f"u{rng.randint(1, 5000)}"
    print(f'{{"user_id":"{key}","i":{i}}}')
PY
head -n 60000 hot-all.ndjson > hot.log
hot_salted() {
  python3 -c 'import json, sys
print(sum(d["events"] for d in json.load(open(sys.argv[1]))["hot_keys_salted"]))' \
    "$1/keyshard-summary.json"
}
ks split -q --incremental -k user_id -n 8 --hot-keys auto -o hot-inc hot.log
first=$(hot_salted hot-inc)
cp hot-all.ndjson hot.log
ks split -q --incremental -k user_id -n 8 --hot-keys auto -o hot-inc hot.log
second=$(hot_salted hot-inc)
ks split -q -k user_id -n 8 --hot-keys auto -o hot-once hot-all.ndjson
expect_eq "$((first + second))" "$(hot_salted hot-once)" "salted events: the two runs' add up to one run's"
[ "$second" -lt "$(hot_salted hot-once)" ] || fail "the second run counts the first run's salted events"
pass "an --incremental run's salted events are its own"

# A cron job over thousands of files: each run names them all again, some rotated, some new, the
# files of earlier runs not named kept. Every line once.
mkdir -p thousands/logs && cd thousands
python3 - <<'PY'
for i in range(3000):
    with open(f"logs/f{i:04d}.log", "w") as f:
        f.write("".join('{"user_id":"u%d","n":%d}\n' % (i % 13, i * 10 + j) for j in range(3)))
PY
run_status ks split -q --incremental -k user_id -n 4 -o out logs/f*.log
expect_eq "$STATUS" 0 "the first run: $ERR"
python3 - <<'PY'
import os
for i in range(3000):
    path = f"logs/f{i:04d}.log"
    if i % 3 == 0:  # rotated, with lines appended before the rotation
        with open(path, "a") as f:
            f.write('{"user_id":"u%d","n":%d}\n' % (i % 13, i * 10 + 3))
        os.rename(path, path + ".1")
        with open(path, "w") as f:
            f.write('{"user_id":"u%d","n":%d}\n' % (i % 13, i * 10 + 4))
    elif i % 3 == 1:  # grown
        with open(path, "a") as f:
            f.write('{"user_id":"u%d","n":%d}\n' % (i % 13, i * 10 + 5))
for i in range(3000, 4000):  # new
    with open(f"logs/g{i:04d}.log", "w") as f:
        f.write('{"user_id":"u%d","n":%d}\n' % (i % 13, i * 10))
PY
run_status ks split -q --incremental -k user_id -n 4 -o out logs/f*[02468].log logs/f*[13579].log \
  logs/g*.log
expect_eq "$STATUS" 0 "the second run: $ERR"
expect_eq "$ERR" "" "no warning"
expect_outputs_hold out "every line of 7,000 files once" logs/*
cd "$WORK"
pass "thousands of files, rotated, grown, new: every line once"

# A later run that fails before its first periodic checkpoint: the message says how to go on,
# and the next run cuts back what it appended and continues exactly.
mkdir -p failed-later && cd failed-later
numbered 0 100 > app.log
ks split -q --incremental --max-line-size 4KiB -k user_id -n 2 -o out app.log
numbered 100 3000 >> app.log
python3 -c 'print("{\"user_id\":\"" + "x" * 10000 + "\"}")' >> app.log
run_status ks split -q --incremental --checkpoint-every off --max-line-size 4KiB -k user_id -n 2 \
  -o out app.log
expect_eq "$STATUS" 1 "a line too long after 2,900 good ones"
expect_contains "$ERR" "keyshard: once that is fixed, the next --incremental run, or \
\`keyshard resume out\` continues the run from its last checkpoint" "the hint"
[ "$(cat out/part-*.ndjson | wc -l)" -gt 100 ] || fail "the lines before it were written"
python3 -c 'f = open("app.log", "r+"); t = f.read(); f.truncate(t.rstrip().rfind("\n") + 1)'
run_status ks split -q --incremental --max-line-size 4KiB -k user_id -n 2 -o out app.log
expect_eq "$STATUS" 0 "the next run: $ERR"
expect_outputs_hold out "every line once" app.log
cd "$WORK"
pass "a later run that fails before its first periodic checkpoint: the next continues it exactly"
