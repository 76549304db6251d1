#!/usr/bin/env bash
# Checkpoints seen from the command line: refusing to overwrite a checkpointed DIR, resume of a
# finished run, inputs changed behind keyshard's back, damaged checkpoints, stdin replay, the
# lock, the guardrails, verify, and a full disk that resume gets past once space returns.
source "$(dirname "$0")/lib.sh"

"$GEN_EVENTS" --events "$(scaled 100000)" --seed 21 |
  awk 'NR % 1000 == 0 { print "not json" } { print }' > events.ndjson
ks split -k user_id -n 8 -q -o reference events.ndjson

# A DIR with a checkpoint is not written over by accident.
run_status ks split -k user_id -n 8 -q -o reference events.ndjson
expect_eq "$STATUS" 2 "split into a checkpointed DIR"
expect_contains "$ERR" "reference: holds the outputs of a finished run: start over with --force" \
  "the hint: a finished run has nothing to resume"
expect_contains "$ERR" "--force" "the hint names --force"
run_status ks resume reference
expect_eq "$STATUS" 0 "resume of a finished run"
expect_contains "$ERR" "the run is complete; nothing to resume" "resume of a finished run"
cp -r reference again
ks split -k user_id -n 8 -q --force -o again events.ndjson
for f in reference/part-*; do expect_same_file "again/${f#reference/}" "$f" "--force starts over"; done
pass "a checkpointed DIR is refused without --force; resume of a finished run is a no-op"

# --force with fewer partitions, then another --name: the earlier run's partition files that
# the new run does not write are removed; files keyshard did not write are left alone.
ks split -k user_id -n 12 -q -o shrink events.ndjson
echo "kept" > shrink/notes.txt
ks split -k user_id -n 8 -q --force -o shrink events.ndjson
expect_eq "$(cd shrink && ls part-* | tr '\n' ' ')" \
  "$(cd reference && ls part-* | tr '\n' ' ')" "only the new run's partition files"
for f in reference/part-*; do expect_same_file "shrink/${f#reference/}" "$f" "--force -n 8"; done
ks split -k user_id -n 8 -q --force --name 'p{partition}.ndjson' -o shrink events.ndjson
expect_eq "$(cd shrink && ls | tr '\n' ' ')" \
  "dead-letter.ndjson keyshard-summary.json notes.txt p0.ndjson p1.ndjson p2.ndjson p3.ndjson p4.ndjson p5.ndjson p6.ndjson p7.ndjson " \
  "the files of a run with another --name"
# An --exec-per worker run writes worker files: the earlier partition files go.
ks split -k user_id -n 8 -j 2 -q --force --exec cat --exec-per worker -o shrink events.ndjson
expect_eq "$(cd shrink && ls | tr '\n' ' ')" \
  "dead-letter.ndjson keyshard-summary.json notes.txt worker-00000.ndjson worker-00001.ndjson " \
  "the files of an --exec-per worker run"
# An input inside DIR that the new run does not write is never removed; one it would write
# is refused before anything is touched.
ks split -k user_id -n 12 -q --force -o shrink events.ndjson
cp shrink/part-00011.ndjson inside.copy
ks split -k user_id -n 4 -q --force -o shrink shrink/part-00011.ndjson
expect_same_file shrink/part-00011.ndjson inside.copy "an input left in DIR by the earlier run"
run_status ks split -k user_id -n 4 -q --force -o shrink shrink/part-00002.ndjson
expect_eq "$STATUS" 2 "an input that is also an output"
expect_contains "$ERR" "shrink/part-00002.ndjson: is both an input and an output of this run" \
  "the message names the file"
run_status ks split -k user_id -n 4 -q -o elsewhere --dead-letter events.ndjson events.ndjson
expect_eq "$STATUS" 2 "an input that is also the dead-letter file"
expect_contains "$ERR" "events.ndjson: is both an input and an output" "names the dead-letter file"
expect_eq "$(cat events.ndjson | wc -l)" "$(cat reference/part-* reference/dead-letter.ndjson | wc -l)" \
  "the input is untouched"
# Nor is an input one of the files the run replaces as it goes: the summary's temporary file,
# or a file in DIR/.keyshard.
ks split -k user_id -n 4 -q -o temporary events.ndjson
head -n 50 events.ndjson > few-events.ndjson
for name in keyshard-summary.json.tmp .keyshard/checkpoint.json.tmp .keyshard/checkpoint.json; do
  cp few-events.ndjson "temporary/$name"
  run_status ks split -k user_id -n 4 -q --force -o temporary "temporary/$name"
  expect_eq "$STATUS" 2 "an input at DIR/$name"
  expect_contains "$ERR" "temporary/$name: is both an input and an output" "the message ($name)"
  expect_same_file "temporary/$name" few-events.ndjson "the input at DIR/$name is untouched"
done
# Another file kept in DIR/.keyshard is no file of the run's: it is read like any input.
cp few-events.ndjson temporary/.keyshard/other.ndjson
ks split -k user_id -n 4 -q --force -o temporary temporary/.keyshard/other.ndjson
expect_eq "$(cat temporary/part-*.ndjson | wc -l)" 50 "an input kept in DIR/.keyshard is read"
# An input that does not exist yet, at the path of a file the run creates, is refused too:
# it would be read when its turn came, empty or growing as the run wrote it.
for target in new-dir/part-00001.ndjson new-dir/.keyshard/checkpoint.json new-dead.ndjson; do
  run_status ks split -k user_id -n 4 -q -o new-dir --dead-letter new-dead.ndjson \
    few-events.ndjson "$target"
  expect_eq "$STATUS" 2 "an input that the run would create ($target)"
  expect_contains "$ERR" "$target: is both an input and an output of this run: it does not exist" \
    "the message ($target)"
  [ ! -e new-dir ] && [ ! -e new-dead.ndjson ] || fail "nothing created for $target"
done
run_status ks split -k user_id -n 4 -q -o - --dead-letter new-dead.ndjson few-events.ndjson \
  ./new-dead.ndjson
expect_eq "$STATUS" 2 "-o -: an input that is the dead-letter file the run would create"
ln -s new-dir/part-00002.ndjson dangling.ndjson  # a link to a file the run would create
run_status ks split -k user_id -n 4 -q -o new-dir few-events.ndjson dangling.ndjson
expect_eq "$STATUS" 2 "an input that is a link to a file the run would create"
[ ! -e new-dir ] || fail "nothing created for the dangling link"
# A --dead-letter that is a dangling link is checked where it leads: to a partition file, or
# to an input that does not exist yet.
ln -s dl-dir/part-00000.ndjson dl-link
run_status ks split -k user_id -n 1 -q -o dl-dir --dead-letter dl-link few-events.ndjson
expect_eq "$STATUS" 2 "a --dead-letter link to a partition file"
expect_contains "$ERR" "one of the run's own output files" "a --dead-letter link: why"
mkdir -p dl-elsewhere && ln -s dl-elsewhere/target dl-link2
run_status ks split -k user_id -n 2 -q -o dl-dir --dead-letter dl-link2 few-events.ndjson \
  dl-elsewhere/target
expect_eq "$STATUS" 2 "an input that a --dead-letter link would create"
[ ! -e dl-elsewhere/target ] || fail "nothing created through the --dead-letter link"
rm -rf dl-dir
# A missing input the run would not create only fails to open when its turn comes (status 1):
# another file under DIR/.keyshard, or a path through a directory that does not exist.
for target in new-dir/.keyshard/other.ndjson no-such-dir/../new-dir/part-00001.ndjson; do
  run_status ks split -k user_id -n 4 -q -o new-dir few-events.ndjson "$target"
  expect_eq "$STATUS" 1 "an input the run would not create ($target)"
  expect_contains "$ERR" "$target" "the message names it ($target)"
  [[ "$ERR" != *"is both an input and an output"* ]] || fail "not an output ($target): $ERR"
  rm -rf new-dir
done
pass "--force removes the earlier run's partition files it does not write"

# ... and its summary and dead letters: a --force run that fails leaves no summary that reads
# as its own, and one that keeps no dead letters leaves none of the earlier run's beside it.
ks split -k user_id -n 2 -q -o reports events.ndjson
[ -s reports/dead-letter.ndjson ] || fail "the earlier run wrote dead letters"
run_status ks split -k user_id -n 2 -q --force --on-bad fail -o reports events.ndjson
expect_eq "$STATUS" 65 "a --force run that stops at a bad line"
expect_eq "$(cd reports && ls | tr '\n' ' ')" "part-00000.ndjson part-00001.ndjson " \
  "no earlier summary or dead letters after a failed --force run"
ks split -k user_id -n 2 -q -o reports --force events.ndjson
ks split -k user_id -n 2 -q --force --on-bad skip -o reports events.ndjson
expect_eq "$(cd reports && ls | tr '\n' ' ')" \
  "keyshard-summary.json part-00000.ndjson part-00001.ndjson " "--on-bad skip keeps no dead letters"
pass "--force removes the earlier run's summary and dead letters"

# A run that stops before it reads a line (a mistyped input name) keeps no checkpoint: resuming
# it would do what a new run does, and the retry, with the name put right, needs no --force.
: > empty.ndjson
for inputs in "few-evnets.ndjson" "empty.ndjson few-evnets.ndjson"; do
  # shellcheck disable=SC2086 # (two names in one case)
  run_status ks split -k user_id -n 4 -q -o typo-dir $inputs
  expect_eq "$STATUS" 1 "a missing first input ($inputs)"
  expect_contains "$ERR" "few-evnets.ndjson: cannot open: No such file or directory" \
    "the message names the input ($inputs)"
  expect_contains "$ERR" "no line was processed, so no checkpoint is kept; once that is fixed" \
    "the message says what was kept ($inputs)"
  [ ! -e typo-dir ] || fail "nothing left behind ($inputs): $(find typo-dir)"
done
mkdir typo-kept && touch typo-kept/notes.txt
run_status ks split -k user_id -n 4 -q -o typo-kept --force few-evnets.ndjson
expect_eq "$STATUS" 1 "a missing input, over --force"
expect_eq "$(find typo-kept | sort | tr '\n' ' ')" "typo-kept typo-kept/notes.txt " \
  "a failed run over --force leaves nothing of its own"
ks split -k user_id -n 4 -q -o typo-dir few-events.ndjson
expect_eq "$(cat typo-dir/part-*.ndjson | wc -l)" "$(wc -l < few-events.ndjson)" \
  "the retry, without --force, writes every event"
rm -rf typo-dir typo-kept
pass "a run that reads nothing keeps no checkpoint, and its retry needs no --force"

# A symbolic link at the name of a file the run writes is replaced, never written through.
ks split -k user_id -n 2 -q -o linked events.ndjson
cp -r linked linked-reference
printf 'keep me\n' > precious.txt
printf 'keep me too\n' > precious-dead.txt
rm linked/part-00001.ndjson
ln -s "$PWD/precious.txt" linked/part-00001.ndjson
ln -sf "$PWD/precious-dead.txt" linked/dead-letter.ndjson
ks split -k user_id -n 2 -q --force -o linked events.ndjson
expect_eq "$(cat precious.txt)" "keep me" "the partition symlink's target is untouched"
expect_eq "$(cat precious-dead.txt)" "keep me too" "the dead-letter symlink's target is untouched"
[ ! -L linked/part-00001.ndjson ] && [ ! -L linked/dead-letter.ndjson ] ||
  fail "the symbolic links are still there"
expect_same_file linked/part-00001.ndjson linked-reference/part-00001.ndjson "the partition file"
expect_same_file linked/dead-letter.ndjson linked-reference/dead-letter.ndjson "the dead letters"
# ... even one that leads to an input named otherwise, or to another of the run's files; a
# link named as an input stays (and is read); one named as an input and an output is refused.
rm -rf linked && cp -r linked-reference linked
rm linked/part-00000.ndjson && ln -s ../events.ndjson linked/part-00000.ndjson
ln -sf part-00001.ndjson linked/dead-letter.ndjson
ks split -k user_id -n 2 -q --force -o linked events.ndjson
[ ! -L linked/part-00000.ndjson ] && [ ! -L linked/dead-letter.ndjson ] ||
  fail "the links to an input and to a partition file are still there"
for f in part-00000.ndjson part-00001.ndjson dead-letter.ndjson; do
  expect_same_file "linked/$f" "linked-reference/$f" "$f, the links replaced"
done
ln -sf ../events.ndjson linked/dead-letter.ndjson
ks split -k user_id -n 2 -q --force --on-bad skip -o linked linked/dead-letter.ndjson
[ -L linked/dead-letter.ndjson ] || fail "a link named as the input was removed"
expect_eq "$(summary_field linked lines_read)" "$(wc -l < events.ndjson)" "the link is read"
run_status ks split -k user_id -n 2 -q --force -o linked linked/dead-letter.ndjson
expect_eq "$STATUS" 2 "a link named as the input, at the dead-letter file's name"
expect_contains "$ERR" "is both an input and an output" "refused as an input that is an output"
[ -L linked/dead-letter.ndjson ] || fail "the refused run removed the link"
ln -s linked linked-alias  # the same link, named through another spelling of DIR
run_status ks split -k user_id -n 2 -q --force -o linked linked-alias/dead-letter.ndjson
expect_eq "$STATUS" 2 "a link named as the input through another spelling of DIR"
[ -L linked/dead-letter.ndjson ] || fail "the link named through another spelling was removed"
# Temporary files and the lock are never written through either.
printf 'keep\n' > victim.txt
ln -s "$PWD/victim.txt" linked/keyshard-summary.json.tmp
ln -s "$PWD/victim.txt" linked/.keyshard/checkpoint.json.tmp
ks split -k user_id -n 2 -q --force -o linked events.ndjson
expect_eq "$(cat victim.txt)" "keep" "the temporary files' link targets are untouched"
[ ! -L linked/keyshard-summary.json ] || fail "the summary became a link"
rm -f linked/.keyshard/lock && ln -s "$PWD/victim.txt" linked/.keyshard/lock
run_status ks split -k user_id -n 2 -q --force -o linked events.ndjson
expect_eq "$STATUS" 1 "a lock file that is a link"
expect_contains "$ERR" "is a symbolic link, which keyshard's lock never is: remove it" "says so"
expect_eq "$(cat victim.txt)" "keep" "the lock's link target is untouched"
rm linked/.keyshard/lock
# ... nor is the state directory: a link there, or a file, is refused before anything is written.
mkdir -p state-elsewhere && rm -rf state-linked && mkdir state-linked
ln -s ../state-elsewhere state-linked/.keyshard
run_status ks split -k user_id -n 2 -q --force -o state-linked events.ndjson
expect_eq "$STATUS" 1 "a state directory that is a link"
expect_contains "$ERR" "state-linked/.keyshard: is a symbolic link, which keyshard's state \
directory never is: remove it" "says so"
expect_eq "$(ls -A state-elsewhere | wc -l) $(ls -A state-linked | wc -l)" "0 1" \
  "nothing written through the link, nor beside it"
rm state-linked/.keyshard && touch state-linked/.keyshard
run_status ks split -k user_id -n 2 -q --force -o state-linked events.ndjson
expect_eq "$STATUS" 1 "a state directory that is a file"
expect_contains "$ERR" "state-linked/.keyshard: is not a directory, where keyshard keeps its \
checkpoints and lock: remove it, or choose another DIR" "says what to do"
pass "--force replaces a symbolic link in DIR rather than write through it"

# A FIFO at the name of a file the run writes (a partition, the dead letters, a child's output)
# is refused at once, naming it: not waited on for a reader, nor written to one.
for case in "part-00000.ndjson:" "dead-letter.ndjson:" "part-00001.ndjson:--exec cat" \
            "part-00000.ndjson.zst:--compress zstd"; do
  name=${case%%:*}
  rm -rf fifo-dir && mkdir fifo-dir && mkfifo "fifo-dir/$name"
  # shellcheck disable=SC2086  # the options, one word each
  run_status timeout 60 "$KEYSHARD" split -k user_id -n 2 -q --force ${case#*:} -o fifo-dir \
    events.ndjson
  expect_eq "$STATUS" 1 "a FIFO at $name"
  expect_contains "$ERR" "fifo-dir/$name: is a FIFO, where keyshard writes an output as a regular \
file (synced, and cut back on resume): remove it, or choose another DIR or --name" "names it"
  [ -p "fifo-dir/$name" ] || fail "the FIFO at $name was replaced"
done
rm -rf fifo-dir && mkdir fifo-dir && mkfifo fifo-dir/part-00000.ndjson
python3 - "$KEYSHARD" <<'PY' || fail "a FIFO with a reader at a partition's name"
import os, subprocess, sys
reader = os.open("fifo-dir/part-00000.ndjson", os.O_RDONLY | os.O_NONBLOCK)  # a reader, at once
run = subprocess.run([sys.argv[1], "split", "-k", "user_id", "-n", "2", "-q", "--force", "-o",
                      "fifo-dir", "events.ndjson"], capture_output=True, timeout=60)
assert run.returncode == 1, run
assert b"fifo-dir/part-00000.ndjson: is a FIFO" in run.stderr, run.stderr
try:
    got = os.read(reader, 1 << 16)
except BlockingIOError:
    got = b""
assert got == b"", got[:100]  # nothing was written to the reader
PY
# Refused before anything in DIR changes: with --force over an earlier run, that run's
# checkpoint, summary and outputs stay as they were (opening the outputs in turn would empty
# those opened before the FIFO's).
rm -rf fifo-over && ks split -k user_id -n 4 -q -o fifo-over events.ndjson
rm fifo-over/part-00002.ndjson && mkfifo fifo-over/part-00002.ndjson
cp -a fifo-over fifo-over-before
run_status timeout 60 "$KEYSHARD" split -k user_id -n 4 -q --force -o fifo-over events.ndjson
expect_eq "$STATUS" 1 "a FIFO among an earlier run's outputs"
expect_contains "$ERR" "fifo-over/part-00002.ndjson: is a FIFO" "names it"
for f in part-00000.ndjson part-00001.ndjson part-00003.ndjson dead-letter.ndjson \
         keyshard-summary.json .keyshard/checkpoint.json; do
  expect_same_file "fifo-over/$f" "fifo-over-before/$f" "--force refused over a FIFO: $f"
done
pass "a FIFO in DIR at the name of an output is refused, neither waited on nor written to"

# The same holds for standard input read from one of the run's files.
cp shrink/part-00002.ndjson stdin.copy
run_status ks split -k user_id -n 4 -q --force -o shrink < shrink/part-00002.ndjson
expect_eq "$STATUS" 2 "standard input that is also an output"
expect_contains "$ERR" \
  "shrink/part-00002.ndjson: is both an input (on standard input) and an output of this run" \
  "the message names the file"
expect_same_file shrink/part-00002.ndjson stdin.copy "the file on standard input is untouched"
run_status ks split -k user_id -n 4 -q --force -o shrink - < shrink/dead-letter.ndjson
expect_eq "$STATUS" 2 "standard input that is the dead-letter file"
pass "standard input that is one of the run's files is refused"

# -o - appending to its own input would read what it writes, for ever.
cp stdin.copy feeds-itself.ndjson
set +e
"$KEYSHARD" split -k user_id -n 4 -q -o - feeds-itself.ndjson >> feeds-itself.ndjson 2> self.err
STATUS=$?
set -e
expect_eq "$STATUS" 2 "standard output appended to an input"
expect_contains "$(cat self.err)" "feeds-itself.ndjson: standard output is this input" "the message"
expect_same_file feeds-itself.ndjson stdin.copy "the input is untouched"
# -o - with a dead-letter file that is standard output would write each over the other.
printf '{"user_id":"u"}\nnot json\n' > one-bad.ndjson
for redirect in '>' '>>'; do
  : > shared-out.ndjson
  set +e
  if [ "$redirect" = '>' ]; then
    "$KEYSHARD" split -k user_id -n 2 -q -o - --dead-letter shared-out.ndjson one-bad.ndjson \
      > shared-out.ndjson 2> self.err
  else
    "$KEYSHARD" split -k user_id -n 2 -q -o - --dead-letter shared-out.ndjson one-bad.ndjson \
      >> shared-out.ndjson 2> self.err
  fi
  STATUS=$?
  set -e
  expect_eq "$STATUS" 2 "a dead-letter file that is standard output ($redirect)"
  expect_contains "$(cat self.err)" "shared-out.ndjson: --dead-letter names the file standard output is" \
    "a dead-letter file that is standard output ($redirect): why"
done
pass "standard output that is an input is refused"

# The dead-letter file may not be one of the files the run keeps in DIR.
printf '{"k":"x"}\n{"k":"y"}\nnot json\n' > few.ndjson
for dead in apart/part-00000.ndjson apart/../apart/keyshard-summary.json \
  apart/keyshard-summary.json.tmp apart/.keyshard/checkpoint.json; do
  rm -rf apart
  run_status ks split -q -k k -n 2 --dead-letter "$dead" -o apart few.ndjson
  expect_eq "$STATUS" 2 "--dead-letter $dead"
  expect_contains "$ERR" "--dead-letter names" "--dead-letter $dead: why"
done
mkdir -p apart-link && ln -sfn "$PWD/apart-link" link-to-it
run_status ks split -q -k k -n 2 --dead-letter link-to-it/part-00001.ndjson -o apart-link few.ndjson
expect_eq "$STATUS" 2 "--dead-letter through a symlink to DIR"
rm -rf apart
ks split -q -k k -n 2 --dead-letter apart/bad.ndjson -o apart few.ndjson
expect_eq "$(cat apart/part-* | wc -l) $(wc -l < apart/bad.ndjson)" "2 1" \
  "a dead-letter file of its own inside DIR"
for dead in /dev/null "$PWD"; do  # kept like an output: synced, checkpointed, cut back on resume
  rm -rf apart
  run_status ks split -q -k k -n 2 --dead-letter "$dead" -o apart few.ndjson
  expect_eq "$STATUS" 2 "--dead-letter $dead with -o DIR"
  expect_contains "$ERR" "--dead-letter \"$dead\" is" "--dead-letter $dead: why"
  [ ! -e apart ] || fail "--dead-letter $dead: DIR made"
done
rm -rf apart  # DIR itself, before it exists
run_status ks split -q -k k -n 2 --dead-letter apart/ -o apart few.ndjson
expect_eq "$STATUS" 2 "--dead-letter naming DIR, not there yet"
expect_contains "$ERR" "--dead-letter \"$PWD/apart/\" is the output directory; name a regular file" \
  "--dead-letter naming DIR: why"
[ ! -e apart ] || fail "--dead-letter naming DIR: DIR made"
expect_eq "$("$KEYSHARD" split -q -k k -n 2 --dead-letter /dev/null -o - few.ndjson | wc -l)" 2 \
  "--dead-letter /dev/null with -o -"
pass "--dead-letter naming one of the run's own files, or no regular file, is refused"

# --dead-letter /dev/stderr into a log: with -o - the dead letters follow what the log held,
# then the summary follows them; with -o DIR (where the file is an output, cut back on resume)
# it is refused, the log untouched.
echo "an earlier line of the log" > run.log
"$KEYSHARD" split -k k -n 2 --dead-letter /dev/stderr -o - few.ndjson > /dev/null 2>> run.log
expect_eq "$(head -n 1 run.log)" "an earlier line of the log" "-o -: the log kept its start"
expect_eq "$(sed -n 2p run.log |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["text"])')" \
  "not json" "-o -: the dead letter follows it"
expect_contains "$(tail -n +3 run.log)" "dead-lettered 1" "-o -: then the summary"
for dead in /dev/stderr run.log; do
  echo "an earlier line of the log" > run.log
  rm -rf apart
  set +e
  "$KEYSHARD" split -q -k k -n 2 --dead-letter "$dead" -o apart few.ndjson 2>> run.log
  STATUS=$?
  set -e
  expect_eq "$STATUS" 2 "--dead-letter $dead, standard error's file, with -o DIR"
  expect_eq "$(head -n 1 run.log)" "an earlier line of the log" "-o DIR: the log kept its start"
  expect_contains "$(cat run.log)" "$dead: --dead-letter names the file standard error is" \
    "--dead-letter $dead, standard error's file: why"
  [ ! -e apart ] || fail "--dead-letter $dead, standard error's file: DIR made"
done
# Standard output or standard error on a pipe: --dead-letter naming the pipe standard output
# writes to would cut the events' lines with the dead letters' (each written in blocks that end
# where they fill), so it is refused as a file standard output writes to is; standard error's
# pipe takes the dead letters through standard error, whole records.
set +e
"$KEYSHARD" split -q -k k -n 2 --dead-letter /dev/stdout -o - few.ndjson 2> piped.err |
  cat > piped.out
STATUS=${PIPESTATUS[0]}
set -e
expect_eq "$STATUS" 2 "--dead-letter /dev/stdout, standard output a pipe"
expect_contains "$(cat piped.err)" "/dev/stdout: --dead-letter names the file standard output is" \
  "--dead-letter /dev/stdout, standard output a pipe: why"
expect_eq "$(wc -c < piped.out)" 0 "--dead-letter /dev/stdout, standard output a pipe: no event"
set +e
"$KEYSHARD" split -q -k k -n 2 --dead-letter /dev/stderr -o - few.ndjson 2>&1 | cat > piped.out
STATUS=${PIPESTATUS[0]}
set -e
expect_eq "$STATUS" 2 "--dead-letter /dev/stderr, standard error a pipe with standard output (2>&1)"
expect_contains "$(cat piped.out)" "/dev/stderr: --dead-letter names the file standard output is" \
  "--dead-letter /dev/stderr, 2>&1 into a pipe: why"
python3 - > long-bad.ndjson <<'PY'
import random
random.seed(7)
for i in range(3000):
    if random.random() < 0.3:
        print("not json " + "z" * random.randint(10, 3000))
    else:
        print('{"k":"u%d","p":"%s"}' % (i % 97, "y" * random.randint(10, 3000)))
PY
{ "$KEYSHARD" split -q -k k -n 4 -j 2 --dead-letter /dev/stderr -o - long-bad.ndjson \
    2>&1 > piped-events.out; } | cat > piped-dead.out
expect_eq "$(python3 -c '
import json, sys
texts = [json.loads(line)["text"] for line in open(sys.argv[1])]
print(len(texts), all(t.startswith("not json ") for t in texts))' piped-dead.out)" \
  "$(grep -c '^not json ' long-bad.ndjson) True" \
  "--dead-letter /dev/stderr, standard error a pipe: every dead letter whole"
expect_eq "$(wc -l < piped-events.out)" "$(grep -c '^{' long-bad.ndjson)" \
  "--dead-letter /dev/stderr, standard error a pipe: the events apart"
pass "--dead-letter naming standard output's or standard error's pipe"
# The lock file removed by hand while a run holds it (taken for a stale one): the run stops at
# its next checkpoint, saying that another run may be writing, and writes no checkpoint past it.
rm -rf lock-gone lock-gone.fifo && mkfifo lock-gone.fifo
"$KEYSHARD" split -q -k user_id -n 4 --checkpoint-every 64KiB -o lock-gone - \
  < lock-gone.fifo 2> lock-gone.err &
pid=$!
exec 9> lock-gone.fifo
head -n 3000 events.ndjson >&9
wait_until grep -qE '"offset":[1-9]' lock-gone/.keyshard/checkpoint.json ||
  fail "lock removed: no checkpoint past the start"
rm lock-gone/.keyshard/lock
# (keyshard may stop, and close the FIFO, before sed has written it all: sed then dies of SIGPIPE.)
sed -n '3001,6000p' events.ndjson >&9 || true
exec 9>&-
set +e; wait "$pid"; STATUS=$?; set -e
expect_eq "$STATUS" 1 "lock removed while held: exit status"
expect_contains "$(cat lock-gone.err)" "lock-gone/.keyshard/lock: was removed or replaced while \
this run held it, so another run may be writing here too" "lock removed while held: why"
offset=$(grep -oE '"offset": ?[0-9]+' lock-gone/.keyshard/checkpoint.json | grep -oE '[0-9]+$')
[ "$offset" -le "$(head -n 3000 events.ndjson | wc -c)" ] ||
  fail "lock removed while held: a checkpoint at $offset, past the lines read before"
pass "a lock file removed while held stops the run at its next checkpoint"

# A partition file removed, replaced or cut short while the run writes it: what the run wrote
# is not in the file of that name, so the run stops (at its next checkpoint, or at its end)
# rather than end with status 0 and count it written. (The run waits on a quiet pipe, having
# written out what it read, while the file is changed. A file cut short is found as long as
# nothing is written past its new end, which leaves a hole: then only verify finds it.)
head -n 3000 events.ndjson > first-3000.ndjson
rm -rf first-3000 && ks split -q -k user_id -n 4 -o first-3000 first-3000.ndjson
holds_first_3000() {  # holds_first_3000 DIR: its partition 2 has all of the first 3000 lines'
  [ "$(stat -c %s "$1/part-00002.ndjson")" = "$(stat -c %s first-3000/part-00002.ndjson)" ]
}
for sabotage in remove replace truncate; do
  rm -rf "out-$sabotage" "out-$sabotage.fifo" && mkfifo "out-$sabotage.fifo"
  "$KEYSHARD" split -q -k user_id -n 4 -o "out-$sabotage" - < "out-$sabotage.fifo" \
    2> "out-$sabotage.err" &
  pid=$!
  exec 9> "out-$sabotage.fifo"
  head -n 3000 events.ndjson >&9
  wait_until holds_first_3000 "out-$sabotage" ||
    fail "$sabotage: what was read is not written out from the quiet pipe"
  case $sabotage in
    remove) rm "out-$sabotage/part-00002.ndjson" ;;
    replace) echo '{"user_id":"someone else"}' > other.ndjson &&
      mv other.ndjson "out-$sabotage/part-00002.ndjson" ;;
    truncate) truncate -s 10 "out-$sabotage/part-00002.ndjson" ;;
  esac
  [ "$sabotage" = truncate ] || sed -n '3001,6000p' events.ndjson >&9 || true  # (see above)
  exec 9>&-
  set +e; wait "$pid"; STATUS=$?; set -e
  expect_eq "$STATUS" 1 "partition file, $sabotage: exit status"
  case $sabotage in
    truncate) why="was cut short while this run wrote it (it holds 10 bytes of the " ;;
    *) why="was removed or replaced while this run wrote it" ;;
  esac
  expect_contains "$(cat "out-$sabotage.err")" "out-$sabotage/part-00002.ndjson: $why" \
    "partition file, $sabotage: the file and what became of it"
  expect_contains "$(cat "out-$sabotage.err")" "put the file back as it was, or start over with \
--force" "partition file, $sabotage: what to do"
done
pass "a partition file removed, replaced or cut short during a run stops it"

# resume too refuses standard error going to the run's dead-letter file, before it writes.
rm -rf halted && rm -f later-input.ndjson
run_status ks split -q -k k -n 2 -o halted few.ndjson later-input.ndjson
expect_eq "$STATUS" 1 "a run stopped by a missing input"
cp halted/dead-letter.ndjson dead-before.ndjson
printf '{"k":"z"}\n' > later-input.ndjson
set +e
"$KEYSHARD" resume -q halted 2>> halted/dead-letter.ndjson
STATUS=$?
set -e
expect_eq "$STATUS" 2 "resume with standard error going to the dead-letter file"
expect_contains "$(tail -n 1 halted/dead-letter.ndjson)" \
  "--dead-letter names the file standard error is" "resume: why"
expect_eq "$(head -n "$(wc -l < dead-before.ndjson)" halted/dead-letter.ndjson)" \
  "$(cat dead-before.ndjson)" "resume: the dead letters untouched"
pass "--dead-letter naming standard error's file: appended with -o -, refused with -o DIR"

# An interrupted run (its checkpoint made incomplete by hand, as a crash would leave it): the
# half-way checkpoint of a tiny interval, then the run killed. Resume must check the inputs.
make_interrupted() {  # DIR INPUT...
  local dir=$1
  shift
  rm -rf "$dir"
  "$KEYSHARD" split -k user_id -n 8 -q --chunk-size 64KiB --checkpoint-every 256KiB \
    -o "$dir" "$@" &
  local pid=$!
  # Wait for a checkpoint past the start, then kill.
  wait_until grep -qE '"offset": *[1-9]' "$dir/.keyshard/checkpoint.json" ||
    fail "$dir: no checkpoint past the start"
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

cp events.ndjson changing.ndjson
mkfifo slow.fifo
(sleep 0.2; cat changing.ndjson; sleep 30) > slow.fifo &
feeder=$!
make_interrupted interrupted slow.fifo
kill "$feeder" 2>/dev/null || true
wait "$feeder" 2>/dev/null || true
grep -qE '"complete": false' interrupted/.keyshard/checkpoint.json ||
  fail "the interrupted run left no incomplete checkpoint"
recorded=$(grep -oE '"offset":[0-9]+' interrupted/.keyshard/checkpoint.json | head -1 | cut -d: -f2)
[ "$recorded" -gt 0 ] || fail "no progress was checkpointed"

# Stdin-like replay: the run read a pipe, so resume needs the same bytes again on stdin... but
# this run named a FIFO path; feed it again through the same path.
(cat events.ndjson) > slow.fifo &
run_status ks resume -q interrupted
wait $! 2>/dev/null || true
expect_eq "$STATUS" 0 "resume with the same stream replayed"
for f in reference/part-*.ndjson; do
  expect_same_file "interrupted/${f#reference/}" "$f" "resume of a pipe replayed"
done
# The dead letters name their source (slow.fifo here): the rest, line numbers included, agrees.
sed 's/"source":"slow.fifo"/"source":"events.ndjson"/' interrupted/dead-letter.ndjson > dl.ndjson
expect_same_file dl.ndjson reference/dead-letter.ndjson "dead letters after a resume"
pass "resume replays a pipe and completes exactly"

# A run reading standard input, stopped (SIGTERM: a background job ignores ^C; SIGHUP: the
# session closed): the hint says the stream must come again, whether it was named - or
# /dev/stdin; the status is 128 + the signal.
for stop in "- TERM 143" "/dev/stdin HUP 129"; do
  read -r name signal expected <<< "$stop"
  rm -rf stdin-int stdin-int.fifo && mkfifo stdin-int.fifo
  (cat events.ndjson; sleep 20) > stdin-int.fifo &
  writer=$!
  # (The signal as a run gets it when nothing ignores it: this test may run under nohup.)
  env --default-signal="$signal" "$KEYSHARD" split -k user_id -n 8 -q --chunk-size 64KiB \
    --checkpoint-every 256KiB --commit async -o stdin-int "$name" < stdin-int.fifo \
    2> stdin-int.err &
  pid=$!
  wait_until grep -qE '"offset":[1-9]' stdin-int/.keyshard/checkpoint.json ||
    fail "stdin-int: no checkpoint past the start"
  kill -"$signal" "$pid" 2>/dev/null || true
  set +e; wait "$pid"; STATUS=$?; set -e
  kill "$writer" 2>/dev/null || true; wait "$writer" 2>/dev/null || true
  expect_eq "$STATUS" "$expected" "SIG$signal to a run reading standard input as $name"
  expect_contains "$(cat stdin-int.err)" "interrupted; resume with: keyshard resume stdin-int \
(with the same stream on its standard input, from its start)" "the resume hint for $name"
done
# Likewise a FIFO named as an input: resume opens it again, and needs the stream from its start.
rm -rf fifo-int fifo-int.fifo && mkfifo fifo-int.fifo
(cat events.ndjson; sleep 20) > fifo-int.fifo &
writer=$!
env --default-signal=TERM "$KEYSHARD" split -k user_id -n 8 -q --chunk-size 64KiB \
  --checkpoint-every 256KiB --commit async -o fifo-int fifo-int.fifo 2> fifo-int.err &
pid=$!
wait_until grep -qE '"offset":[1-9]' fifo-int/.keyshard/checkpoint.json ||
  fail "fifo-int: no checkpoint past the start"
kill -TERM "$pid" 2>/dev/null || true
set +e; wait "$pid"; STATUS=$?; set -e
kill "$writer" 2>/dev/null || true; wait "$writer" 2>/dev/null || true
expect_eq "$STATUS" 143 "SIGTERM to a run reading a named FIFO"
expect_contains "$(cat fifo-int.err)" "interrupted; resume with: keyshard resume fifo-int \
(with the same stream written to fifo-int.fifo again, from its start)" "the resume hint for a FIFO"
pass "the resume hint of a run that read standard input, or a FIFO"

# Stdin: the same stream completes exactly; a different one is refused, naming <stdin>.
rm -rf from-stdin
mkfifo from-stdin.fifo
"$KEYSHARD" split -k user_id -n 8 -q --chunk-size 64KiB --checkpoint-every 256KiB \
  -o from-stdin < from-stdin.fifo &
pid=$!
exec 3> from-stdin.fifo  # (held open: the run waits for more after the events)
cat events.ndjson >&3
wait_until grep -qE '"offset":[1-9]' from-stdin/.keyshard/checkpoint.json || true
kill -KILL "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
exec 3>&-
grep -qE '"offset":[1-9]' from-stdin/.keyshard/checkpoint.json || fail "no stdin checkpoint"
sed 's/user_/usr_/' events.ndjson > other.ndjson
run_status ks resume -q from-stdin < other.ndjson
expect_eq "$STATUS" 1 "resume with a different stream on stdin"
expect_contains "$ERR" "<stdin>: changed since the checkpoint" "a different stdin is refused"
expect_contains "$ERR" "resume continues the very inputs the run read" \
  "and says what resume needs (no \"once that is fixed\")"
# A terminal on stdin (the stream forgotten): a warning says what resume needs, as split warns.
cp -r from-stdin tty-resume
script -qefc "'$KEYSHARD' resume --no-progress tty-resume" /dev/null > tty-resume.out 2>&1 &
tty_pid=$!
wait_until grep -q "reading the run's stream from the terminal: it reads that stream again from \
its start, so give it on standard input (keyshard resume tty-resume < FILE, or a pipe)" \
  tty-resume.out || fail "resume from a terminal: no warning: $(cat tty-resume.out)"
kill "$tty_pid" 2>/dev/null || true
pkill -f "resume --no-progress tty-resume" 2>/dev/null || true
wait "$tty_pid" 2>/dev/null || true
run_status ks resume from-stdin < events.ndjson
expect_eq "$STATUS" 0 "resume with the same stdin"
# The summary's counts are the whole run's; its time and speed, the resume's own.
expect_eq "$(sed -n 's/^keyshard: \([0-9,]*\) lines from 1 input over the whole run; this process read [0-9.]* MB in [0-9.]* s ([0-9.]* MB\/s)$/\1/p' <<< "$ERR" | tr -d ,)" \
  "$(wc -l < events.ndjson)" "the resumed run's headline: the whole run's lines, this resume's time"
for f in reference/part-*.ndjson; do
  expect_same_file "from-stdin/${f#reference/}" "$f" "resume from stdin replayed"
done
pass "stdin replay: the same stream completes exactly, another is refused"

# Stdin is known by its bytes alone: a run that read a file on stdin resumes from a pipe.
# (--commit async: a checkpoint that waits for a sync of the whole filesystem may land only
# after the run has read everything, on a slow or busy disk.)
python3 - "$KEYSHARD" <<'PY' || fail "a run reading a file on stdin, stopped"
import os, re, signal, subprocess, sys, time
for attempt in range(5):
    subprocess.run(["rm", "-rf", "stdin-file"], check=True)
    run = subprocess.Popen([sys.argv[1], "split", "-k", "user_id", "-n", "8", "-q", "--chunk-size",
                            "64KiB", "--checkpoint-every", "256KiB", "--commit", "async",
                            "-o", "stdin-file"],
                           stdin=open("events.ndjson", "rb"))
    while run.poll() is None:
        try:
            if re.search(r'"offset":[1-9]', open("stdin-file/.keyshard/checkpoint.json").read()):
                break
        except (FileNotFoundError, UnicodeDecodeError):
            pass
        time.sleep(0.0005)
    for sig in (signal.SIGSTOP, signal.SIGINT, signal.SIGCONT):
        try:
            run.send_signal(sig)
        except ProcessLookupError:
            pass
    if run.wait() == 130:
        sys.exit(0)
sys.exit(1)
PY
# Standard input closed, where the run has it still to read: refused before anything changes.
cp stdin-file/.keyshard/checkpoint.json stdin-checkpoint.before
run_status timeout 60 "$KEYSHARD" resume -q stdin-file <&-
expect_eq "$STATUS" 2 "resume with standard input closed, of a run still reading it"
expect_contains "$ERR" "keyshard: standard input is closed; the run reads its stream again" \
  "the message says why"
expect_same_file stdin-file/.keyshard/checkpoint.json stdin-checkpoint.before \
  "the refused resume leaves the checkpoint as it was"
run_status bash -c 'cat events.ndjson | "$KEYSHARD" resume -q stdin-file'
expect_eq "$STATUS" 0 "resume from a pipe of a run that read a file on stdin: $ERR"
for f in reference/part-*.ndjson; do
  expect_same_file "stdin-file/${f#reference/}" "$f" "stdin from a file, then from a pipe"
done
pass "stdin is known by its bytes: a file, then a pipe"

# A run that read standard input to its end before it stopped resumes with stdin closed.
rm -rf stdin-first
printf '{"user_id":"first"}\n' > first.ndjson
"$KEYSHARD" split -k user_id -n 8 -q --chunk-size 64KiB --checkpoint-every 256KiB \
  -o stdin-first - events.ndjson < first.ndjson &
wait_until grep -qE '"offset":[1-9][0-9]{4}' stdin-first/.keyshard/checkpoint.json ||
  fail "stdin-first: no checkpoint past standard input"
kill -KILL $! 2>/dev/null || true
wait 2>/dev/null || true
run_status timeout 60 "$KEYSHARD" resume -q stdin-first <&-
expect_eq "$STATUS" 0 "resume, standard input closed, of a run past it: $ERR"
cat first.ndjson events.ndjson | ks split -k user_id -n 8 -q -o stdin-first-reference
for f in stdin-first-reference/part-*.ndjson; do
  expect_same_file "stdin-first/${f#stdin-first-reference/}" "$f" "stdin read, then a file"
done
pass "a run past its standard input resumes with standard input closed"

# An input changed before the recorded position is refused, naming it.
rm -rf changed2
(sleep 0.1; cat events.ndjson; sleep 30) > slow.fifo &
feeder=$!
make_interrupted changed2 slow.fifo
kill "$feeder" 2>/dev/null || true
wait "$feeder" 2>/dev/null || true
(printf 'x'; cat events.ndjson) > slow.fifo &
run_status ks resume -q changed2
wait $! 2>/dev/null || true
expect_eq "$STATUS" 1 "resume over a changed input"
expect_contains "$ERR" "slow.fifo: changed since the checkpoint" "the changed input is named"
pass "an input changed before the recorded position is refused, naming it"

# Damaged checkpoints: truncated and flipped, refused with a message (never a crash).
cp -r reference damaged
size=$(stat -c %s damaged/.keyshard/checkpoint.json)
for cut in 0 1 $((size / 2)) $((size - 2)); do
  cp reference/.keyshard/checkpoint.json damaged/.keyshard/checkpoint.json
  truncate -s "$cut" damaged/.keyshard/checkpoint.json
  sed -i 's/"complete": true/"complete": false/' damaged/.keyshard/checkpoint.json
  run_status ks resume damaged
  expect_eq "$STATUS" 1 "resume with a checkpoint cut to $cut bytes"
  expect_contains "$ERR" "damaged checkpoint" "a cut checkpoint is refused"
done
cp reference/.keyshard/checkpoint.json damaged/.keyshard/checkpoint.json
sed -i 's/"complete": true/"complete": false/' damaged/.keyshard/checkpoint.json
run_status ks resume damaged
expect_contains "$ERR" "checksum mismatch" "an edited checkpoint is refused"
run_status ks verify damaged
expect_eq "$STATUS" 1 "verify with an edited checkpoint"
# The same split again over it says it is damaged, as resume does, rather than offer resume.
run_status ks split -k user_id -n 8 -q -o damaged events.ndjson
expect_eq "$STATUS" 1 "a split over a damaged checkpoint"
expect_contains "$ERR" "damaged checkpoint (checksum mismatch); start over with --force" \
  "a split over a damaged checkpoint says so"
if grep -q "keyshard resume" <<<"$ERR"; then fail "no resume is offered over a damaged checkpoint"; fi
cp reference/.keyshard/checkpoint.json damaged/.keyshard/checkpoint.json
echo >> damaged/.keyshard/checkpoint.json
run_status ks resume damaged
expect_contains "$ERR" "does not end with its checksum: cut short, or written to after it" \
  "a checkpoint with a byte after its checksum"
# verify reports one line a file, whatever the file's name holds.
rm -rf odd-names
ks split -q -k user_id -n 2 --name "$(printf 'p{partition}\nx\033[31m')" -o odd-names \
  few-events.ndjson
echo junk >> "odd-names/$(printf 'p0\nx\033[31m')"
run_status ks verify odd-names
expect_eq "$STATUS" 1 "verify of a changed file with control bytes in its name"
expect_eq "$(printf '%s\n' "$OUT" | wc -l)" 1 "verify: one line for the file"
expect_contains "$OUT" 'odd-names/p0\nx\x1b[31m: extended: 5 bytes after' "verify: the name, escaped"
run_status ks resume no-such-dir
expect_eq "$STATUS" 2 "resume of a directory without a checkpoint"
expect_contains "$ERR" "no checkpoint here" "resume of a directory without a checkpoint"
# A FIFO in the checkpoint's place does not hold resume, verify or the next run; a file in the
# place of DIR/.keyshard is named.
rm -rf fifo-state && cp -r reference fifo-state && rm fifo-state/.keyshard/checkpoint.json
mkfifo fifo-state/.keyshard/checkpoint.json
for command in "resume fifo-state" "verify fifo-state" \
  "split -q --incremental -k user_id -n 8 -o fifo-state events.ndjson"; do
  run_status timeout 20 "$KEYSHARD" $command
  expect_eq "$STATUS" 1 "$command with a FIFO for a checkpoint"
  expect_contains "$ERR" "fifo-state/.keyshard/checkpoint.json: is not a regular file" \
    "$command: the message"
done
mkdir -p file-state && touch file-state/.keyshard
run_status ks resume file-state
expect_eq "$STATUS" 2 "resume with a file for DIR/.keyshard"
expect_contains "$ERR" "file-state/.keyshard: is not a directory" "the message names it"
# A run recorded with a --hot-keys SHARE below the floor (0.01%), from before there was one, goes
# on; a new run with that SHARE is refused.
rm -rf tiny-share && ks split -q -k user_id -n 8 --hot-keys auto:1% --incremental -o tiny-share \
  few-events.ndjson
sed -i 's/"hot-keys":"auto:1%"/"hot-keys":"auto:0.005%"/' tiny-share/.keyshard/checkpoint.json
resign tiny-share/.keyshard/checkpoint.json
sed -n '51,100p' events.ndjson > later-events.ndjson
run_status ks split -q -k user_id -n 8 --hot-keys auto:0.005% --incremental -o tiny-share \
  few-events.ndjson later-events.ndjson
expect_eq "$STATUS" 0 "an --incremental run recorded with auto:0.005%: $ERR"
run_status ks split -q -k user_id -n 8 --hot-keys auto:0.005% -o tiny-new few-events.ndjson
expect_eq "$STATUS" 2 "a new run with auto:0.005%"
expect_contains "$ERR" "SHARE from 0.01%" "the floor"
# A checkpoint edited and signed again (its checksum is XXH3-64 of the bytes before it) with a
# recorded -j or -n out of range is refused, not run with 100,000 threads.
for edit in 's/"threads":[0-9]*/"threads":100000/' 's/"partitions":[0-9]*/"partitions":0/'; do
  rm -rf resigned && cp -r reference resigned
  unfinish resigned
  ks verify -q resigned  # signed again: accepted as it stands
  sed -i "$edit" resigned/.keyshard/checkpoint.json
  resign resigned/.keyshard/checkpoint.json
  run_status ks resume resigned
  expect_eq "$STATUS" 1 "resume with a recorded option out of range ($edit)"
  expect_contains "$ERR" "the recorded options are refused: " "why ($edit)"
  expect_contains "$ERR" "is out of range" "which ($edit)"
done
# A resume refused over one output cuts none of the others: none is cut back to the checkpoint
# before all of them passed their checks (here the last partition's file is gone, and the first
# holds bytes written after the checkpoint, which a resume would cut).
rm -rf refused refused-before && cp -r reference refused
unfinish refused
echo '{"user_id":"after the checkpoint"}' >> refused/part-00000.ndjson
rm refused/part-00007.ndjson
cp -a refused refused-before
for threads in 1 2; do
  run_status ks resume -j "$threads" refused
  expect_eq "$STATUS" 1 "resume -j $threads with an output removed"
  expect_contains "$ERR" "refused/part-00007.ndjson: cannot open to continue" \
    "resume -j $threads: the removed output is named"
  # (The lock file holds the pid of the last process that took it.)
  run_status diff -r --exclude=lock refused-before refused
  expect_eq "$STATUS" 0 "resume -j $threads refused: every file is as it was: $OUT"
done
# With the file back, the resume goes on: the bytes after the checkpoint are cut.
cp reference/part-00007.ndjson refused/
ks resume -q refused
for f in reference/part-*.ndjson; do
  expect_same_file "refused/$(basename "$f")" "$f" "resumed after the refusal: $(basename "$f")"
done
pass "a refused resume cuts no output; the resume after it cuts what followed the checkpoint"
# A directory where the checkpoint file belongs: verify, resume and split --force all say to
# move it away (--force, which removes a file there, cannot remove it).
rm -rf dir-checkpoint && cp -r reference dir-checkpoint
rm dir-checkpoint/.keyshard/checkpoint.json && mkdir dir-checkpoint/.keyshard/checkpoint.json
for command in "verify dir-checkpoint" "resume dir-checkpoint" \
  "split -q --force -k user_id -n 8 -o dir-checkpoint few-events.ndjson"; do
  run_status ks $command
  expect_eq "$STATUS" 1 "a directory as the checkpoint: $command"
  expect_contains "$ERR" "dir-checkpoint/.keyshard/checkpoint.json: is a directory, where the \
checkpoint file belongs: move it away" "a directory as the checkpoint: $command, why"
done
# --force over a checkpoint that cannot be read (here an -n 8 run's, split again with -n 4): the
# files it does not write are left, and a warning names them.
rm -rf unreadable && cp -r reference unreadable
echo garbage >> unreadable/.keyshard/checkpoint.json
run_status ks split -q --force -k user_id -n 4 -o unreadable few-events.ndjson
expect_eq "$STATUS" 0 "--force over a checkpoint that cannot be read"
expect_contains "$ERR" "warning: unreadable: the earlier run's checkpoint cannot be read, so its \
files that this run does not write are left as they were: part-00004.ndjson, part-00005.ndjson, \
part-00006.ndjson and 1 more; remove them if they are that run's" "the files left are named"
pass "damaged checkpoints are refused with a message"

# verify: clean, then each kind of tampering is named.
run_status ks verify reference
expect_eq "$STATUS" 0 "verify of untouched outputs"
expect_contains "$OUT" "all 9 files match the checkpoint" "verify's summary line"
printf '{"user_id":"a"}\n' > one-event.ndjson
ks split -q -k user_id -n 1 --on-bad skip -o single one-event.ndjson
run_status ks verify single
expect_eq "$OUT" "single: the 1 file matches the checkpoint (1 line, 16 bytes)" \
  "verify of one file and one line, in the singular"
cp -r reference tampered
printf 'X' | dd of=tampered/part-00003.ndjson bs=1 seek=100 conv=notrunc status=none
truncate -s -10 tampered/part-00005.ndjson
echo '{"user_id":"late"}' >> tampered/part-00006.ndjson
rm tampered/part-00007.ndjson && mkdir tampered/part-00007.ndjson
rm tampered/part-00001.ndjson && mkfifo tampered/part-00001.ndjson
rm tampered/part-00002.ndjson
run_status timeout 20 "$KEYSHARD" verify tampered
expect_eq "$STATUS" 1 "verify of tampered outputs"
expect_contains "$OUT" "tampered/part-00003.ndjson: changed" "a changed byte"
expect_contains "$OUT" "tampered/part-00005.ndjson: truncated" "a truncated file"
expect_contains "$OUT" "tampered/part-00006.ndjson: extended: 19 bytes after the " "an extended file"
# Sizes are given as the summary gives them, with thousands separators.
python3 - reference/part-00005.ndjson reference/part-00006.ndjson <<PY || fail "verify's sizes"
import os, sys
out = """$OUT"""
five, six = (os.path.getsize(path) for path in sys.argv[1:])
assert f"part-00005.ndjson: truncated: {five - 10:,} bytes, the checkpoint records {five:,}" \
    in out, out
assert f"part-00006.ndjson: extended: 19 bytes after the {six:,} the checkpoint records" in out, out
PY
expect_contains "$OUT" "tampered/part-00007.ndjson: not a file: a directory is in its place" \
  "a directory in a file's place"
expect_contains "$OUT" "tampered/part-00001.ndjson: not a regular file any more" "a FIFO"
expect_contains "$OUT" "tampered/part-00002.ndjson: missing: the checkpoint records " \
  "a file removed"
expect_contains "$ERR" "6 of 9 files differ" "verify's count"
tampered=$OUT
run_status timeout 20 "$KEYSHARD" verify -q tampered
expect_eq "$STATUS" 1 "verify -q of tampered outputs"
expect_eq "$OUT" "$tampered" "verify -q: the files that differ"
expect_eq "$ERR" "" "verify -q: nothing more"
cp -r reference one-changed
echo '{"user_id":"late"}' >> one-changed/part-00006.ndjson
run_status ks verify one-changed
expect_contains "$ERR" "one-changed: 1 of 9 files differs from the checkpoint; to have the outputs \
anew, run the split again with --force" "one file, singular, and what to do"
# A file that cannot be read (here a link to itself: root reads any file) is not known to differ.
rm one-changed/part-00004.ndjson && ln -s part-00004.ndjson one-changed/part-00004.ndjson
run_status ks verify one-changed
expect_contains "$ERR" "one-changed: 1 of 9 files differs from the checkpoint, and 1 cannot be read" \
  "one that differs, one unread"
cp reference/part-00006.ndjson one-changed/
run_status ks verify one-changed
expect_contains "$ERR" "1 of 9 files cannot be read, so whether it matches the checkpoint is not \
known" "one unread"
# Of a run not finished: bytes after the checkpoint are resume's to cut; a file changed before
# them makes resume refuse. verify says which.
rm -rf unfinished-changed && cp -r reference unfinished-changed && unfinish unfinished-changed
echo '{"user_id":"late"}' >> unfinished-changed/part-00006.ndjson
run_status ks verify unfinished-changed
expect_contains "$ERR" "unfinished-changed: 1 of 9 files differs from the checkpoint; keyshard \
resume cuts the bytes written after the checkpoint and goes on" "an unfinished run's, extended"
sed -i '1s/^{/{"x":1,/' unfinished-changed/part-00005.ndjson
run_status ks verify unfinished-changed
expect_contains "$ERR" "unfinished-changed: 2 of 9 files differ from the checkpoint; resume \
refuses a file changed within what the checkpoint records: run the split again with --force" \
  "an unfinished run's, changed"
run_status ks resume -q unfinished-changed
expect_eq "$STATUS" 1 "whose resume refuses"
pass "verify names changed, truncated, extended and missing outputs"

# A file the run did not write, named as its partition files are, would be taken for one by
# what reads them by a pattern: verify names it (a file named otherwise is none of its business).
rm -rf stray && cp -r reference stray
printf '{"user_id":"forged"}\n' > stray/part-00008.ndjson
echo 'a note' > stray/notes-2.txt
mkdir stray/part-00009.ndjson
run_status ks verify stray
expect_eq "$STATUS" 1 "verify with a stray partition-like file"
expect_eq "$OUT" "stray/part-00008.ndjson: not written by the run: the checkpoint names no such \
file, yet the pattern of the partition files' names matches it" "verify: the stray file, alone"
expect_contains "$ERR" "stray: all 9 files match the checkpoint, yet 1 other file is named like a \
partition file and is not the run's: move it away" "verify: what to do with it"
run_status ks verify -q stray
expect_eq "$STATUS" 1 "verify -q with a stray file"
expect_eq "$ERR" "" "verify -q with a stray file: its line only"
echo '{"user_id":"late"}' >> stray/part-00006.ndjson
run_status ks verify stray
expect_contains "$ERR" "stray: 1 of 9 files differs from the checkpoint; to have the outputs anew, \
run the split again with --force; and 1 other file is named like a partition file" \
  "verify: a changed file and a stray one"
rm stray/part-00008.ndjson
cp reference/part-00006.ndjson stray/
run_status ks verify stray
expect_eq "$STATUS" 0 "verify once the stray file is gone (a note and a directory left)"
# The pattern is the --name template's, each field a '*': its own digits are not a field's.
printf '{"user_id":"a"}\n' > one-user.ndjson
ks split -q -k user_id -n 2 --name 'v2-{partition}.ndjson' -o stray-named one-user.ndjson
echo '{"user_id":"b"}' > stray-named/v3-0.ndjson
run_status ks verify stray-named
expect_eq "$STATUS" 0 "verify: v3-0.ndjson is not of the pattern v2-*.ndjson"
echo '{"user_id":"b"}' > stray-named/v2-x.ndjson
run_status ks verify stray-named
expect_contains "$OUT" "stray-named/v2-x.ndjson: not written by the run" "verify: v2-x.ndjson is"
pass "verify names a file named like a partition file that the run did not write"

# Guardrails: exit 3 and 4 after a complete run (checkpoint complete, summary written).
run_status ks split -k user_id -n 8 -q --max-bad 10 -o guard-bad events.ndjson
expect_eq "$STATUS" 3 "--max-bad 10 with more bad lines"
expect_contains "$ERR" "more than --max-bad 10" "the --max-bad message"
grep -q '"complete": true' guard-bad/.keyshard/checkpoint.json || fail "--max-bad: no final checkpoint"
[ -f guard-bad/keyshard-summary.json ] || fail "--max-bad: no summary"
run_status ks split -k user_id -n 8 -q --max-bad 5% -o guard-share events.ndjson
expect_eq "$STATUS" 0 "--max-bad 5% with 0.1% bad lines"
run_status ks split -k user_id -n 8 -q --max-bad 0.05% -o guard-share2 events.ndjson
expect_eq "$STATUS" 3 "--max-bad 0.05% with 0.1% bad lines"
# A share exactly at the limit is not more than it (7/1000 and 0.7/100 differ as doubles).
for case in "7 1000 0.7% 0" "7 1000 0.69% 3" "57 10000 0.57% 0" "57 10000 0.56% 3"; do
  read -r bad lines limit want <<< "$case"
  python3 -c "import sys; sys.stdout.write('x\n' * $bad + '{\"user_id\":\"a\"}\n' * ($lines - $bad))" \
    > at-limit.ndjson
  run_status ks split -k user_id -n 2 -q --on-bad skip --max-bad "$limit" -o - at-limit.ndjson
  expect_eq "$STATUS" "$want" "--max-bad $limit with $bad bad lines of $lines"
done
run_status ks split -k user_id -n 8 -q --max-skew 1.01 -o guard-skew events.ndjson
expect_eq "$STATUS" 4 "--max-skew 1.01 on Zipf keys"
expect_contains "$ERR" "above --max-skew 1.01" "the --max-skew message"
for skew in nan -nan NaN 0.5; do
  run_status ks split -k user_id -n 8 -q --max-skew "$skew" -o guard-skew-nan events.ndjson
  expect_eq "$STATUS" 2 "--max-skew $skew"
done
run_status ks split -k user_id -n 8 -q --max-skew 100 -o guard-skew2 events.ndjson
expect_eq "$STATUS" 0 "--max-skew 100"
run_status ks split -k user_id -n 8 -q --max-bad lots -o x events.ndjson
expect_eq "$STATUS" 2 "an invalid --max-bad"
# Past both limits: both are named, with --max-bad's status.
run_status ks split -k user_id -n 8 -q --max-bad 0 --max-skew 1.01 -o guard-both events.ndjson
expect_eq "$STATUS" 3 "past --max-bad and --max-skew"
expect_contains "$ERR" "more than --max-bad 0; the outputs and the checkpoint are complete" \
  "the --max-bad message"
expect_contains "$ERR" "keyshard: and skew" "and the --max-skew one"
pass "guardrails: exit 3 and 4 after the checkpoint"

# The lock: a second run on a DIR in use exits 75 naming the holder's pid.
mkfifo held.fifo
"$KEYSHARD" split -k user_id -n 8 -q -o locked held.fifo &
holder=$!
wait_until test -s locked/.keyshard/lock || fail "the first run took no lock"
run_status ks split -k user_id -n 8 -q --incremental -o locked events.ndjson
expect_eq "$STATUS" 75 "a second run on a locked DIR"
expect_contains "$ERR" "another keyshard run (pid $holder)" "the lock holder's pid"
# verify does not take a running run's files for damaged ones.
run_status ks verify locked
expect_eq "$STATUS" 75 "verify while a run writes DIR"
expect_contains "$ERR" "run is writing here" "verify says a run is writing"
exec 9> held.fifo  # let the holder read an empty input and finish
exec 9>&-
wait "$holder"
ks verify -q locked || fail "verify once the run has ended"
pass "a second run on the same DIR exits 75 naming the holder; verify waits for its end"

# ... and a run that has written its checkpoints and goes on writing.
mkfifo live.fifo
(cat events.ndjson; sleep 60) > live.fifo &
live_writer=$!
"$KEYSHARD" split -k user_id -n 4 -q --checkpoint-every 64KiB --chunk-size 64KiB -o live \
  live.fifo &
live_run=$!
wait_until grep -qE '"offset":[1-9]' live/.keyshard/checkpoint.json || true
grep -qE '"offset":[1-9]' live/.keyshard/checkpoint.json || fail "no checkpoint of the live run"
run_status ks verify live
expect_eq "$STATUS" 75 "verify while a run with checkpoints writes DIR"
expect_contains "$ERR" "live: a keyshard run is writing here, so its files are not those of a \
checkpoint; verify once it has ended" "the message"
kill "$live_writer" 2>/dev/null || true  # the end of the run's input
wait "$live_run" || fail "the live run"
wait "$live_writer" 2>/dev/null || true
ks verify -q live || fail "verify once the live run has ended"
pass "verify of a DIR a run is writing exits 75"

# Two runs started together on a DIR that does not exist yet: one writes it, the other exits
# 75 naming it, or 2 if the first has already finished (neither fails to create the directory
# the other has just made).
for round in 1 2 3 4 5; do
  rm -rf racing
  "$KEYSHARD" split -k user_id -n 8 -q -o racing events.ndjson 2> race-a.err &
  first=$!
  set +e
  "$KEYSHARD" split -k user_id -n 8 -q -o racing events.ndjson 2> race-b.err
  second_status=$?
  wait "$first"
  first_status=$?
  set -e
  case "$(printf '%s\n' "$first_status" "$second_status" | sort | tr '\n' ' ')" in
    "0 75 ")
      expect_contains "$(cat race-a.err race-b.err)" "another keyshard run (pid " "the message"
      if grep -q 'pid unknown' race-a.err race-b.err; then fail "the holder's pid was not read"; fi
      ;;
    "0 2 ") expect_contains "$(cat race-a.err race-b.err)" \
              "holds the outputs of a finished run: start over with --force" "the message" ;;
    *) fail "two runs racing for a new DIR, round $round: $first_status and $second_status:" \
         "$(cat race-a.err race-b.err)" ;;
  esac
done
pass "two runs racing for a new DIR"

# The last checkpoint cannot be written: the run fails (no summary: it has not ended), says
# how to go on, and resume then completes it exactly.
rm -rf lastfail feed.fifo && mkfifo feed.fifo
"$KEYSHARD" split -k user_id -n 8 -q --checkpoint-every off -o lastfail feed.fifo 2> lastfail.err &
pid=$!
wait_until test -e lastfail/.keyshard/checkpoint.json || fail "lastfail: no start checkpoint"
mkdir lastfail/.keyshard/checkpoint.json.tmp  # the last checkpoint cannot be created
cat events.ndjson > feed.fifo
set +e; wait "$pid"; STATUS=$?; set -e
expect_eq "$STATUS" 1 "a run whose last checkpoint cannot be written"
expect_contains "$(cat lastfail.err)" "checkpoint.json.tmp: cannot create" "the error names the file"
expect_contains "$(cat lastfail.err)" "\`keyshard resume lastfail\` (with the same stream written to \
feed.fifo again, from its start) continues the run" "and says how to go on"
[ ! -e lastfail/keyshard-summary.json ] || fail "no summary for a run that failed"
rmdir lastfail/.keyshard/checkpoint.json.tmp
cat events.ndjson > feed.fifo &
ks resume -q lastfail
wait
for f in reference/part-*.ndjson; do  # (the dead letters name another input)
  expect_same_file "lastfail/${f#reference/}" "$f" "resume after the last checkpoint failed"
done
expect_eq "$(wc -l < lastfail/dead-letter.ndjson)" "$(wc -l < reference/dead-letter.ndjson)" \
  "every dead letter once"
[ -e lastfail/keyshard-summary.json ] || fail "the resumed run writes the summary"
pass "a last checkpoint that cannot be written: no summary, a hint, then resume"

# A write error (a full disk; else a file-size limit), then resume once there is room.
small=$WORK/small
mkdir "$small"
if mount -t tmpfs -o size=1m tmpfs "$small" 2>/dev/null; then
  trap 'umount "$small" 2>/dev/null; cleanup' EXIT
  run_status ks split -k user_id -n 8 -q --checkpoint-every 256KiB -o "$small/out" events.ndjson
  expect_eq "$STATUS" 1 "a run that fills the disk"
  expect_contains "$ERR" "$small/out/" "the write error names the file"
  expect_contains "$ERR" "No space left on device" "the write error's reason"
  mount -o remount,size=200m "$small"
  ks resume -q "$small/out"
  for f in reference/part-*.ndjson reference/dead-letter.ndjson; do
    expect_same_file "$small/out/${f#reference/}" "$f" "resume after the disk had room again"
  done
  umount "$small"
  trap cleanup EXIT
  pass "a full disk fails naming the file; resume completes exactly"
else
  run_status bash -c "ulimit -f 256; exec \"$KEYSHARD\" split -k user_id -n 2 -q \
    --checkpoint-every 64KiB -o limited events.ndjson"
  expect_eq "$STATUS" 1 "a run past the file-size limit"
  expect_contains "$ERR" "limited/part-0000" "the write error names the file"
  ks resume -q limited
  ks split -k user_id -n 2 -q -o limited-ref events.ndjson
  for f in limited-ref/part-*.ndjson; do
    expect_same_file "limited/${f#limited-ref/}" "$f" "resume after the limit was lifted"
  done
  pass "a file-size limit fails naming the file; resume completes exactly"
fi

# A --dead-letter given as a relative path is recorded absolute: verify and resume work from
# any directory.
mkdir -p elsewhere
ks split -k user_id -n 8 -q --dead-letter bad-lines.ndjson -o with-dl events.ndjson
(cd elsewhere && ks verify -q ../with-dl) || fail "verify from another directory"
grep -q "\"file_base64\\|\"file\":\"$WORK/bad-lines.ndjson\"" with-dl/.keyshard/checkpoint.json ||
  fail "the dead-letter file is not recorded by its absolute path"
pass "a relative --dead-letter is recorded absolute"

# ... but one inside DIR is recorded by its name there: DIR can move, and verify and resume
# follow it. (The run stops at a missing second input, keeping its checkpoint.)
rm -rf moving moved && { head -n 300 events.ndjson; echo 'not json'; } > with-bad.ndjson
run_status ks split -k user_id -n 4 -q --dead-letter moving/dl.ndjson -o moving with-bad.ndjson \
  later.ndjson
expect_eq "$STATUS" 1 "a run with a missing second input"
mv moving moved
tail -n 50 events.ndjson > later.ndjson
ks resume -q moved
ks verify -q moved || fail "verify of a moved DIR with its own --dead-letter"
expect_eq "$(grep -c '"source":"with-bad.ndjson"' moved/dl.ndjson)" 1 \
  "the dead letter, in the moved DIR"
[ ! -e moving ] || fail "resume wrote into DIR's old place"
rm later.ndjson
# verify reads a file as zstd when the run compressed it, whatever its name.
ks split -k user_id -n 2 -q --name 'p{partition}.zst' --dead-letter zst-dl.zst -o zst-names \
  with-bad.ndjson
ks verify -q zst-names || fail "verify of plain files named .zst"
pass "a --dead-letter inside DIR moves with it; verify knows compressed files from the run"

# The start checkpoint of a compressed run records every output at 0 bytes: the files are not
# synced yet, and a crash (a power cut) may leave them empty or missing, which must still match
# (an empty output gets its empty zstd frame when the run ends, not at its start). Here the run
# waits on standard input after that checkpoint, and is killed there.
rm -rf zst-start
mkfifo zst-start.fifo
"$KEYSHARD" split -k user_id -n 2 -q --compress zstd -o zst-start - < zst-start.fifo &
pid=$!
exec 3> zst-start.fifo  # (held open, and nothing written: the run waits)
wait_until test -f zst-start/.keyshard/checkpoint.json || true
[ -f zst-start/.keyshard/checkpoint.json ] || fail "no start checkpoint within 30 s"
kill -KILL "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
exec 3>&-
python3 - zst-start/.keyshard/checkpoint.json <<'PY' || fail "the start checkpoint records bytes"
import json, sys
sizes = [o["size"] for o in json.load(open(sys.argv[1]))["outputs"]]
sys.exit(0 if sizes == [0, 0] else f"recorded sizes {sizes}")
PY
rm zst-start/part-00000.ndjson.zst
: > zst-start/part-00001.ndjson.zst
ks verify -q zst-start || fail "verify of an unfinished run's missing and empty outputs"
ks resume -q zst-start < events.ndjson
ks verify -q zst-start || fail "verify after the resume"
ks split -k user_id -n 2 -q --compress zstd -o zst-start-ref events.ndjson
for p in 0 1; do
  f=part-0000$p.ndjson.zst
  cmp -s <(zstd -dcq "zst-start/$f") <(zstd -dcq "zst-start-ref/$f") ||
    fail "resume after a crash at the start checkpoint: $f differs"
done
pass "a crash at a compressed run's start checkpoint resumes from empty or missing outputs"

# An input cut short between the run and its resume, past the recorded position: resume reads it
# as it is now, and warns that it lost bytes the run was to read. The run stops at a bad line
# (--on-bad fail) after a few checkpoints; the bad line and what follows are then replaced by a
# shorter tail.
grep -v 'not json' events.ndjson > cut-good.ndjson
head -n 7000 cut-good.ndjson > cut-head.ndjson
{ cat cut-head.ndjson; echo 'not json'; tail -n 2000 cut-good.ndjson; } > cut-input.ndjson
rm -rf cut
run_status ks split -k user_id -n 4 -q --on-bad fail --chunk-size 64KiB --checkpoint-every 256KiB \
  -o cut cut-input.ndjson
expect_eq "$STATUS" 65 "a run stopped by a bad line"
grep -qE '"offset":[1-9]' cut/.keyshard/checkpoint.json || fail "no checkpoint before the bad line"
{ cat cut-head.ndjson; tail -n 20 cut-good.ndjson; } > cut-input.ndjson
cp cut-input.ndjson cut-now.ndjson
run_status ks resume -q cut
expect_eq "$STATUS" 0 "resume of an input cut short past its position"
commas() { python3 -c 'import sys; print(f"{int(sys.argv[1]):,}")' "$1"; }  # as keyshard writes
expect_contains "$ERR" "cut-input.ndjson: it holds $(commas "$(wc -c < cut-input.ndjson)") bytes, \
fewer than the $(commas $(( $(wc -c < cut-head.ndjson) + 9 + $(tail -n 2000 cut-good.ndjson | \
wc -c) ))) it held when the run read it: it was cut short since" "the warning of an input cut short"
ks split -k user_id -n 4 -q -o cut-ref cut-now.ndjson
for f in cut-ref/part-*.ndjson; do
  expect_same_file "cut/${f#cut-ref/}" "$f" "resume of an input cut short"
done
pass "resume warns of an input cut short since the run, and reads it as it is"

# ^C during an --exec run: the children (in a process group of their own) see the end of their
# input, the run checkpoints and exits 130, and resume finishes it.
rm -rf exec-int
"$KEYSHARD" split -k user_id -n 4 -q --exec cat --chunk-size 64KiB --checkpoint-every 256KiB \
  -o exec-int events.ndjson 2> exec-int.err &
pid=$!
wait_until test -f exec-int/.keyshard/checkpoint.json || fail "exec-int: no start checkpoint"
kill -INT "$pid" 2>/dev/null || true
set +e
wait "$pid"
status=$?
set -e
if [ "$status" -ne 0 ]; then
  expect_eq "$status" 130 "exit status of an --exec run after ^C"
  expect_contains "$(cat exec-int.err)" "interrupted; resume with" "the --exec ^C message"
  ks resume -q exec-int
fi
ks split -k user_id -n 4 -q --exec cat -o exec-int-ref events.ndjson
for f in exec-int-ref/part-*.ndjson; do
  sort -u "$f" > want.sorted
  sort -u "exec-int/$(basename "$f")" > got.sorted
  expect_same_file got.sorted want.sorted "--exec after ^C and resume"
done
pass "^C during an --exec run: exit 130 with a checkpoint; resume completes"

# resume goes on where the run started: its relative input paths work from anywhere.
mkdir -p started-here && cd started-here
printf '{"k":"a"}\n' > first.ndjson
run_status ks split -q -k k -n 2 -o out first.ndjson second.ndjson
expect_eq "$STATUS" 1 "a run stopped by a missing second input"
expect_contains "$ERR" 'once that is fixed, `keyshard resume out` continues the run' \
  "a run stopped by a missing input says how to go on"
# A name in the hint cannot start a line of its own: its control bytes are shown as escapes.
run_status ks split -q -k k -n 2 -o "$(printf 'odd\nkeyshard: forged')" first.ndjson second.ndjson
expect_eq "$STATUS" 1 "a run with a newline in DIR's name stopped by a missing input"
expect_contains "$ERR" 'keyshard resume odd\nkeyshard: forged`' "the name in the hint, escaped"
expect_eq "$(printf '%s\n' "$ERR" | grep -c '^keyshard: forged')" 0 "no forged line"
printf '{"k":"b"}\n' > second.ndjson
cd /
run_status "$KEYSHARD" resume -q "$WORK/started-here/out"
cd "$WORK"
expect_eq "$STATUS" 0 "resume from another directory: $ERR"
expect_eq "$(cat started-here/out/part-* | sort | tr -d '\n')" '{"k":"a"}{"k":"b"}' \
  "resume from another directory reads the inputs where the run started"
pass "resume works from any directory"

# A run that fails before its first checkpoint (here: it cannot be created) cannot be resumed,
# so it removes the files it created, and the retry needs no --force.
printf '{"k":"a","v":1}\n{"k":"b","v":2}\n' > two.ndjson
mkdir -p nofirst/.keyshard/checkpoint.json.tmp  # the first checkpoint cannot be created
run_status ks split -k k -n 2 -q -o nofirst two.ndjson
expect_eq "$STATUS" 1 "a run whose first checkpoint cannot be written"
expect_contains "$ERR" "no checkpoint was written, so the run cannot be resumed" \
  "the failure says why there is nothing to resume"
expect_eq "$(ls -A nofirst)" ".keyshard" "the failed run leaves nothing but its state directory"
rmdir nofirst/.keyshard/checkpoint.json.tmp
ks split -k k -n 2 -q -o nofirst two.ndjson
expect_eq "$(cat nofirst/part-*.ndjson | sort | tr -d '\n')" '{"k":"a","v":1}{"k":"b","v":2}' \
  "the retry, without --force"
pass "a run that fails before its first checkpoint removes what it created"

# resume where a run stopped before its first checkpoint (killed while creating its files, say)
# says so; resume of a finished run needs no lock, so a read-only DIR is fine.
printf '{"k":"a"}\n' > one.ndjson
ks split -q -k k -n 2 -o early one.ndjson
rm early/.keyshard/checkpoint.json
# (held as a run does while it creates its files, until the test lets go)
flock early/.keyshard/lock sh -c 'until [ -e early.release ]; do sleep 0.01; done' &
locker=$!
wait_until sh -c '! flock -n early/.keyshard/lock true' || fail "the lock was never taken"
run_status ks resume early
expect_eq "$STATUS" 75 "resume while a run that has no checkpoint yet holds DIR"
expect_contains "$ERR" "has not written its first checkpoint yet" "says why"
touch early.release
wait "$locker"
run_status ks resume early
expect_eq "$STATUS" 2 "resume without a checkpoint"
expect_contains "$ERR" "stopped before its first checkpoint (or its checkpoint was removed), so it cannot be resumed" "says why"
ks split -q -k k -n 2 -o finished one.ndjson
if unshare -m true 2> /dev/null; then
  run_status unshare -m bash -c 'mount --bind finished finished &&
    mount -o remount,bind,ro finished && "$0" resume finished' "$KEYSHARD"
  expect_eq "$STATUS" 0 "resume of a finished run in a read-only DIR"
  expect_contains "$ERR" "the run is complete; nothing to resume" "says it is complete"
else
  echo "checkpoints: SKIP: no mount namespace (needs root), so no read-only DIR"
fi
pass "resume with no checkpoint, and of a finished run in a read-only DIR"

# An unfinished run whose DIR cannot be written in (but its .keyshard can, so the lock is had):
# resume says so before it reads a byte, not at the end, with the summary.
grep -v -m 5000 'not json' events.ndjson > unwritable.ndjson
{ cat unwritable.ndjson; echo 'not json'; } > unwritable-input.ndjson
run_status ks split -q -k user_id -n 2 --on-bad fail --chunk-size 64KiB --checkpoint-every 256KiB \
  -o unwritable unwritable-input.ndjson
expect_eq "$STATUS" 65 "a run stopped by a bad line"
{ cat unwritable.ndjson; echo '{"user_id":"u"}'; } > unwritable-input.ndjson
if unshare -m true 2> /dev/null; then
  run_status unshare -m bash -c 'mount --bind unwritable unwritable &&
    mount -o remount,bind,ro unwritable &&
    mount --bind unwritable/.keyshard unwritable/.keyshard &&
    mount -o remount,bind,rw unwritable/.keyshard && "$0" resume unwritable' "$KEYSHARD"
  expect_eq "$STATUS" 1 "resume of an unfinished run into a DIR it cannot write in"
  expect_contains "$ERR" "unwritable: cannot write in it: Read-only file system (resume writes \
the summary and its checkpoints there)" "says so"
  grep -q '"complete": false' unwritable/.keyshard/checkpoint.json ||
    fail "the checkpoint was left as it was"
else
  echo "checkpoints: SKIP: no mount namespace (needs root), so no DIR that cannot be written in"
fi
ks resume -q unwritable
ks verify -q unwritable || fail "verify after the resume"
# Likewise when DIR can be written in but not DIR/.keyshard (its checkpoints'): a user's own
# files, so the run is one as nobody; its partition files are left as they were.
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
  shared=$(mktemp -d) && chmod 755 "$shared" && mkdir -m 777 "$shared/work"
  cp "$KEYSHARD" "$shared/keyshard" && chmod 755 "$shared/keyshard"
  { cat unwritable.ndjson; echo 'not json'; } > "$shared/work/in.ndjson"
  chmod 644 "$shared/work/in.ndjson"
  as_nobody() {  # as_nobody COMMAND: in the shared work directory, $0 being keyshard
    setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c "cd \"\$1\" && $1" \
      "$shared/keyshard" "$shared/work"
  }
  run_status as_nobody '"$0" split -q -k user_id -n 2 --on-bad fail --chunk-size 64KiB \
    --checkpoint-every 256KiB -o state-ro in.ndjson'
  expect_eq "$STATUS" 65 "as nobody: a run stopped by a bad line"
  { cat unwritable.ndjson; echo '{"user_id":"u"}'; } > "$shared/work/in.ndjson"
  chmod 555 "$shared/work/state-ro/.keyshard"
  sizes=$(stat -c %s "$shared"/work/state-ro/part-*)
  run_status as_nobody '"$0" resume state-ro'
  expect_eq "$STATUS" 1 "resume with DIR/.keyshard not writable"
  expect_contains "$ERR" "state-ro/.keyshard: cannot write in it: Permission denied (resume \
writes its checkpoints there)" "says so"
  expect_eq "$(stat -c %s "$shared"/work/state-ro/part-*)" "$sizes" \
    "resume with DIR/.keyshard not writable: the partition files as they were"
  rm -rf "$shared"
fi
pass "resume says at once that it cannot write in DIR"

# A run that has ended but was not waited for (a zombie, as under an init process that does not
# reap) is not a live holder of the lock: its --exec children, which still hold it, are waited
# for. Here a process that the test does not wait for takes the lock, writes its pid, leaves a
# child holding the lock for 2 s, and ends.
ks split -q -k user_id -n 2 -o zombie-held few-events.ndjson
# hold_lock LOCK TAG: in the background, a process takes LOCK, writes its pid, leaves a child
# holding LOCK until TAG.release exists, and ends unwaited for (a zombie) until TAG.done
# exists; its pid goes to TAG.pid once it is a zombie.
hold_lock() {
  python3 - "$1" "$2" <<'PY' &
import fcntl, os, sys, time
lock, tag = sys.argv[1], sys.argv[2]
holder = os.fork()
if holder == 0:
    fd = os.open(lock, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    if os.fork() == 0:  # the "child" that still holds the lock
        while not os.path.exists(tag + ".release"):
            time.sleep(0.02)
        os._exit(0)
    os._exit(0)
while open(f"/proc/{holder}/stat").read().rsplit(")", 1)[1].split()[0] != "Z":
    time.sleep(0.01)
with open(tag + ".pid.tmp", "w") as out:
    out.write(f"{holder}\n")
os.rename(tag + ".pid.tmp", tag + ".pid")
while not os.path.exists(tag + ".done"):
    time.sleep(0.05)
os.waitpid(holder, 0)
PY
}
# wait_for_text FILE TEXT: until FILE holds TEXT (see wait_until).
wait_for_text() {
  wait_until grep -qF "$2" "$1" || fail "no [$2] in $1 within 120 s: $(cat "$1")"
}
hold_lock zombie-held/.keyshard/lock zombie
reaper=$!
wait_until test -s zombie.pid || true
holder=$(cat zombie.pid)
expect_eq "$(awk '{print $3}' "/proc/$holder/stat" 2>/dev/null)" Z "the holder is a zombie"
"$KEYSHARD" split -q -k user_id -n 2 --force -o zombie-held few-events.ndjson 2> zombie.err &
run=$!
wait_for_text zombie.err "waiting for the --exec children of an earlier run (pid $holder)"
touch zombie.release
set +e
wait "$run"
status=$?
set -e
touch zombie.done
wait "$reaper"
expect_eq "$status" 0 "a run after one that ended, not waited for, while its children held the lock"
# A signal while it waits ends it, in order.
hold_lock zombie-held/.keyshard/lock waiting
reaper=$!
wait_until test -s waiting.pid || true
"$KEYSHARD" split -q -k user_id -n 2 --force -o zombie-held few-events.ndjson 2> waiting.err &
run=$!
wait_for_text waiting.err "waiting for the --exec children of an earlier run"
kill -TERM "$run"
set +e
wait "$run"
status=$?
set -e
touch waiting.release waiting.done
wait "$reaper"
expect_eq "$status" 143 "SIGTERM while waiting for the lock"
expect_contains "$(cat waiting.err)" "zombie-held: interrupted while waiting for them; nothing was \
read or written" "says so"
pass "a zombie is not a live run: its children are waited for"

# Between checkpoints further apart than 64 MiB of input, --commit sync also syncs the outputs
# every 64 MiB; -v counts those syncs. --commit async never syncs.
"$GEN_EVENTS" --bytes 72MiB --seed 23 > seventy.ndjson
ks split -k user_id -n 4 -v --checkpoint-every off -o sync-ahead seventy.ndjson 2> ahead.err
expect_contains "$(cat ahead.err)" "outputs synced between them: 1" \
  "one sync 64 MiB into a run without periodic checkpoints"
ks split -k user_id -n 4 -v --checkpoint-every 64MiB -o sync-default seventy.ndjson 2> default.err
expect_contains "$(cat default.err)" "checkpoints during the run: 2  outputs synced between them: 0" \
  "checkpoints every 64 MiB (and the one at the start) sync on their own"
ks split -k user_id -n 4 -v --checkpoint-every off --commit async -o async-ahead \
  seventy.ndjson 2> async.err
expect_contains "$(cat async.err)" "checkpoints during the run: 1" "the checkpoint at the start"
[[ "$(cat async.err)" != *synced* ]] || fail "--commit async syncs nothing: $(cat async.err)"
for f in sync-ahead/part-*; do
  expect_same_file "sync-default/${f#sync-ahead/}" "$f" "the syncs change no byte"
  expect_same_file "async-ahead/${f#sync-ahead/}" "$f" "--commit async writes the same bytes"
done
pass "--commit sync syncs every 64 MiB between checkpoints further apart; -v counts the syncs"

# --checkpoint-every auto (the default) is 64 MiB, or 256 KiB a partition up to 256 MiB: with
# -n 512, 128 MiB, so 72 MiB of input has only the checkpoint at the start, and no sync ahead
# either. A size given is kept whatever -n is. Under auto a checkpoint also waits until half a
# second after the last, and there is no sync ahead: with -n 4, a checkpoint comes 64 MiB into
# the run, or at a later chunk, or not before the end if the run reads 72 MiB within half a
# second (which depends on the machine's speed).
ks split -k user_id -n 512 -v -o auto-512 seventy.ndjson 2> auto512.err
expect_contains "$(cat auto512.err)" "checkpoints during the run: 1  outputs synced between them: 0" \
  "-n 512: checkpoints every 128 MiB by default"
ks split -k user_id -n 512 -v --checkpoint-every off -o off-512 seventy.ndjson 2> off512.err
expect_contains "$(cat off512.err)" "checkpoints during the run: 1  outputs synced between them: 0" \
  "-n 512: no sync ahead within 128 MiB"
ks split -k user_id -n 512 -v --checkpoint-every 64MiB -o given-512 seventy.ndjson 2> given512.err
expect_contains "$(cat given512.err)" "checkpoints during the run: 2  outputs synced between them: 0" \
  "-n 512 --checkpoint-every 64MiB: as given"
ks split -k user_id -n 4 -v --checkpoint-every auto -o auto-4 seventy.ndjson 2> auto4.err
case "$(cat auto4.err)" in
  *"checkpoints during the run: 2  outputs synced between them: 0"*) ;;
  *"checkpoints during the run: 1  outputs synced between them: 0"*) ;;
  *) fail "-n 4 --checkpoint-every auto: a checkpoint from 64 MiB on, and no sync ahead: \
$(cat auto4.err)" ;;
esac
expect_eq "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["options"]["checkpoint-every"])' \
  auto-512/.keyshard/checkpoint.json 2> /dev/null || echo unreadable)" auto "the checkpoint records auto"
for f in auto-512/part-*; do
  expect_same_file "given-512/${f#auto-512/}" "$f" "the interval changes no byte"
done
pass "--checkpoint-every auto: 64 MiB, or 256 KiB a partition up to 256 MiB, half a second apart"

# Under auto, a pipe gone quiet gets the checkpoint due by size at once, however soon after the
# last: 72 MiB, then nothing while the pipe stays open.
rm -rf quiet-pipe quiet-pipe.fifo && mkfifo quiet-pipe.fifo
"$KEYSHARD" split -q -k user_id -n 4 -o quiet-pipe - < quiet-pipe.fifo 2> quiet-pipe.err &
pid=$!
exec 9> quiet-pipe.fifo
cat seventy.ndjson >&9
for ((i = 0; i < 1000; i++)); do
  grep -qE '"offset": ?[1-9]' quiet-pipe/.keyshard/checkpoint.json 2> /dev/null && break
  sleep 0.01
done
grep -qE '"offset": ?[1-9]' quiet-pipe/.keyshard/checkpoint.json ||
  fail "a quiet pipe 72 MiB in: no checkpoint past the start"
exec 9>&-
wait "$pid" || fail "the quiet pipe's run: $(cat quiet-pipe.err)"
expect_same_file quiet-pipe/part-00000.ndjson auto-4/part-00000.ndjson "the quiet pipe's output"
pass "--checkpoint-every auto: a pipe gone quiet gets the checkpoint due at once"

# DIR moved while a run goes on: the run fails at its next write there by name, its message
# saying that `resume` of DIR where it now is continues it; and so it does (the FIFO input,
# read from its start again, skipped to the checkpoint's offset).
"$GEN_EVENTS" --bytes 400000 --seed 9 > paced.ndjson
rm -rf paced-dir paced-dir.new paced-whole && rm -f paced.fifo && mkfifo paced.fifo
cat > feed.py <<'PY'
import sys, time
lines = open(sys.argv[1], 'rb').readlines()
try:
    with open(sys.argv[2], 'wb') as fifo:
        for i in range(0, len(lines), 100):
            fifo.write(b''.join(lines[i:i + 100]))
            fifo.flush()
            time.sleep(float(sys.argv[3]))
except BrokenPipeError:  # (the run it fed has stopped)
    pass
PY
python3 feed.py paced.ndjson paced.fifo 0.2 &
feeder=$!
"$KEYSHARD" split -q -k user_id -n 4 --checkpoint-every 1s -o paced-dir paced.fifo \
  2> paced.err &
running=$!
wait_until grep -q '"offset":[1-9]' paced-dir/.keyshard/checkpoint.json ||
  fail "a paced run: no checkpoint past the start"
mv paced-dir paced-dir.new
set +e
wait "$running"
STATUS=$?
set -e
wait "$feeder"
expect_eq "$STATUS" 1 "a run whose DIR was moved"
expect_contains "$(cat paced.err)" "the checkpoint this run wrote in paced-dir is gone: if the \
directory was moved, \`keyshard resume NEWDIR\` (with the same stream written to paced.fifo again, \
from its start) continues the run from there" "the message"
python3 feed.py paced.ndjson paced.fifo 0 &
feeder=$!
ks resume -q paced-dir.new
wait "$feeder"
ks split -q -k user_id -n 4 -o paced-whole paced.ndjson
for p in 0 1 2 3; do
  expect_same_file "paced-dir.new/part-0000$p.ndjson" "paced-whole/part-0000$p.ndjson" \
    "partition $p, DIR moved, then resumed"
done
ks verify -q paced-dir.new
pass "DIR moved during a run: resumed where it is"
