#!/usr/bin/env bash
# zstd inputs are recognised by their magic bytes and zstd outputs decompress to exactly the
# plain outputs; a truncated zstd input fails clearly and writes nothing beyond what was read.
source "$(dirname "$0")/lib.sh"

"$GEN_EVENTS" --events 200000 --seed 3 > events.ndjson
zstd -q -3 events.ndjson -o events.ndjson.zst
cp events.ndjson.zst no-suffix.bin

ks split -k user_id -n 8 -o plain -q events.ndjson
ks split -k user_id -n 8 -o from-zstd -q no-suffix.bin
for f in plain/part-*.ndjson; do
  expect_same_file "from-zstd/$(basename "$f")" "$f" "zstd input, found by magic bytes"
done
pass "zstd input by magic bytes"

ks split -k user_id -n 8 --compress zstd:1 -o packed -q events.ndjson.zst
for f in plain/part-*.ndjson; do
  [ -f "packed/$(basename "$f").zst" ] || fail "missing packed/$(basename "$f").zst"
  zstd -q -dc "packed/$(basename "$f").zst" > unpacked.ndjson
  expect_same_file unpacked.ndjson "$f" "zstd output round trip"
done
pass "zstd outputs round-trip"

# Two inputs, one compressed: same as their concatenation.
head -n 1000 events.ndjson > a.ndjson
tail -n +1001 events.ndjson | zstd -q -c > b.ndjson.zst
ks split -k user_id -n 8 -o mixed -q a.ndjson b.ndjson.zst
for f in plain/part-*.ndjson; do
  expect_same_file "mixed/$(basename "$f")" "$f" "plain + zstd inputs"
done
pass "mixed inputs"

# Truncated: a clear error naming the file, and only whole lines that were read are written.
size=$(stat -c %s events.ndjson.zst)
head -c $((size / 2)) events.ndjson.zst > truncated.zst
run_status ks split -k user_id -n 4 -o cut -q truncated.zst
expect_eq "$STATUS" 1 "exit status for a truncated zstd input"
expect_contains "$ERR" "truncated.zst" "error names the file"
expect_contains "$ERR" "truncated zstd input" "error says why"
cat cut/part-*.ndjson | sort > written.sorted
lines=$(wc -l < written.sorted)
[ "$lines" -gt 0 ] || fail "lines before the truncation were written"
head -n "$lines" events.ndjson | sort > expected.sorted
expect_same_file written.sorted expected.sorted "only a prefix of the input was written"
expect_contains "$ERR" "truncated.zst:$((lines + 1)): truncated zstd input" \
  "the error names the line it is in, after the lines written"
for command in "stats -k user_id -n 4" "plan -k user_id --from 4 --to 5"; do
  run_status ks $command truncated.zst
  expect_eq "$STATUS" 1 "$command: exit status for a truncated zstd input"
  expect_contains "$ERR" "truncated.zst:$((lines + 1)): truncated zstd input" "$command: the line"
done
pass "truncated zstd input"

# Plain text appended to a zstd file (cat a.zst b.ndjson > x.zst): the frames' lines are read,
# then the error says what follows the last frame is not one.
head -n 1000 events.ndjson | zstd -q -c > appended.zst
tail -n 5 events.ndjson >> appended.zst
run_status ks split -k user_id -n 8 -o - appended.zst
expect_eq "$STATUS" 1 "exit status for text after a zstd frame"
expect_contains "$ERR" "appended.zst:1001: corrupt zstd input: what follows a complete zstd frame \
is not another frame (was something appended to the compressed file?)" "the error says so"
expect_eq "$(printf '%s\n' "$OUT" | wc -l)" 1000 "the frame's lines are written"
pass "text after a zstd frame"

# A damaged frame shows it only at its end, where its checksum is checked: the lines read from
# it before were handled. A checkpoint that covers some of them may not be resumed (a resume
# after the input is mended would keep them); one before the frame may, and gives the outputs
# of a run on the sound input. Two frames, the second's checksum (the last 4 bytes) damaged.
head -n 1000 events.ndjson | zstd -q -c > two-frames.zst
tail -n +1001 events.ndjson | zstd -q -c >> two-frames.zst
cp two-frames.zst damaged.zst
python3 -c "
import sys
data = bytearray(open(sys.argv[1], 'rb').read())
data[-1] ^= 0xff
open(sys.argv[1], 'wb').write(data)" damaged.zst
run_status ks split -k user_id -n 8 -q --checkpoint-every 1B -o damaged damaged.zst
expect_eq "$STATUS" 1 "exit status for a damaged zstd frame"
grep -Eq "^keyshard: damaged.zst:[0-9]+: corrupt zstd input: Restored data doesn't match checksum$" \
  <<<"$ERR" || fail "the error names the file, a line and why: $ERR"
expect_contains "$ERR" "covers lines of a zstd frame of damaged.zst that were read before its damage \
showed" \
  "the message says the checkpoint covers lines of the damaged frame"
expect_contains "$ERR" "the checkpoint is removed, and the run cannot be resumed" "and what is done"
[ ! -e damaged/.keyshard/checkpoint.json ] || fail "the checkpoint over the damaged frame is gone"
cat two-frames.zst > damaged.zst  # mended in place
run_status ks resume -q damaged
expect_eq "$STATUS" 2 "no resume over the lines of a damaged frame"
# No checkpoint past the start: resume is offered, and once the input is mended it writes what
# a run on the sound input writes.
cp two-frames.zst damaged-early.zst
python3 -c "
import sys
data = bytearray(open(sys.argv[1], 'rb').read())
data[-1] ^= 0xff
open(sys.argv[1], 'wb').write(data)" damaged-early.zst
run_status ks split -k user_id -n 8 -q --checkpoint-every 1h -o early damaged-early.zst
expect_eq "$STATUS" 1 "exit status for a damaged zstd frame, no checkpoint past the start"
expect_contains "$ERR" "keyshard resume early" "resume is offered when no checkpoint covers the frame"
cat two-frames.zst > damaged-early.zst
ks resume -q early || fail "resume once the input is mended"
for f in plain/part-*.ndjson; do
  expect_same_file "early/$(basename "$f")" "$f" "resumed over the mended zstd input"
done
# The last checkpoint inside the first frame, the second damaged: that checkpoint covers no line
# of the damaged frame, so it stays, and a resume once the input is mended writes what a run on
# the sound input writes. (Chunks of 16 KiB, so that checkpoints fall inside the first frame.)
head -n 1000 events.ndjson > first-frames.ndjson
sed -n '1001,1100p' events.ndjson >> first-frames.ndjson
head -n 1000 events.ndjson | zstd -q -c > sound-frames.zst
sed -n '1001,1100p' events.ndjson | zstd -q -c >> sound-frames.zst
cp sound-frames.zst later-damage.zst
python3 -c "
import sys
data = bytearray(open(sys.argv[1], 'rb').read())
data[-1] ^= 0xff
open(sys.argv[1], 'wb').write(data)" later-damage.zst
first_frame=$(head -n 1000 events.ndjson | wc -c)
run_status ks split -k user_id -n 8 -q --chunk-size 16KiB --checkpoint-every 64KiB -o later \
  later-damage.zst
expect_eq "$STATUS" 1 "exit status for a damaged second frame"
expect_contains "$ERR" "keyshard resume later" "resume is offered: no checkpoint covers the frame"
python3 - later/.keyshard/checkpoint.json "$first_frame" <<'PY' || fail "a checkpoint in frame 1"
import json, sys
offset = json.load(open(sys.argv[1]))["inputs"][0]["offset"]
assert 0 < offset <= int(sys.argv[2]), offset
PY
cat sound-frames.zst > later-damage.zst
ks resume -q later || fail "resume over the mended second frame"
ks split -k user_id -n 8 -q -o later-reference first-frames.ndjson
for f in later-reference/part-*.ndjson; do
  expect_same_file "later/$(basename "$f")" "$f" "resumed from inside the first frame"
done
# An --incremental input rewritten since the last run, its new frame damaged: that run's lines
# came from other bytes, so its checkpoint stays.
head -n 600 events.ndjson | zstd -q -c > growing.zst
ks split -k user_id -n 4 -q --incremental -o growing growing.zst
sed -n '601,2000p' events.ndjson | zstd -q -c > rewritten.zst
python3 -c "
import sys
data = bytearray(open(sys.argv[1], 'rb').read())
data[-1] ^= 0xff
open(sys.argv[2], 'wb').write(data)" rewritten.zst growing.zst
run_status ks split -k user_id -n 4 -q --incremental -o growing growing.zst
expect_eq "$STATUS" 1 "exit status for a rewritten input with a damaged frame"
expect_contains "$ERR" "reading it again from the start" "the rewritten input is read from 0"
[ -e growing/.keyshard/checkpoint.json ] || fail "the checkpoint of the earlier bytes stays"
if grep -q "checkpoint is removed" <<<"$ERR"; then fail "no checkpoint removed: $ERR"; fi
# An --incremental input whose last frame had all its lines but not yet its checksum: the run
# took them all. The checksum that comes then is wrong: the next run meets it on the way to its
# recorded position, and that checkpoint goes too.
head -n 1000 events.ndjson | zstd -q -c > whole-frame.zst
size=$(stat -c %s whole-frame.zst)
head -c $((size - 4)) whole-frame.zst > unchecked.zst
ks split -k user_id -n 4 -q --incremental -o unchecked unchecked.zst
python3 -c "
import sys
tail = bytearray(open(sys.argv[1], 'rb').read()[-4:])
tail[0] ^= 0xff
open(sys.argv[2], 'ab').write(tail)" whole-frame.zst unchecked.zst
run_status ks split -k user_id -n 4 -q --incremental -o unchecked unchecked.zst
expect_eq "$STATUS" 1 "exit status for a wrong checksum after the recorded position's frame"
expect_contains "$ERR" "corrupt zstd input: Restored data doesn't match checksum" "why"
expect_contains "$ERR" "the checkpoint is removed" "the checkpoint over the frame goes"
[ ! -e unchecked/.keyshard/checkpoint.json ] || fail "no checkpoint over the damaged frame"
pass "a damaged zstd frame: no resume from a checkpoint over its lines"

# Damage met inside a frame: the lines decoded before it are handled, all but at most a block's
# worth (128 KiB), and the error names the line after them. The first byte whose damage the
# decoder detects there (rather than by the checksum, at the frame's end) is used.
zstd -q -3 -c events.ndjson > one-frame.zst
python3 - one-frame.zst events.ndjson "$KEYSHARD" <<'PY' || fail "lines before damage in a frame"
import re, subprocess, sys
packed = open(sys.argv[1], "rb").read()
plain = open(sys.argv[2], "rb").read()
for at in range(len(packed) // 3, len(packed) // 2, 997):
    damaged = bytearray(packed)
    damaged[at] ^= 0xFF
    open("inner-damage.zst", "wb").write(damaged)
    run = subprocess.run([sys.argv[3], "stats", "-k", "user_id", "-n", "4", "inner-damage.zst"],
                         capture_output=True)
    said = re.search(rb"^keyshard: inner-damage.zst:(\d+): corrupt zstd input: Data corruption "
                     rb"detected$", run.stderr, re.M)
    if run.returncode == 1 and said:
        break
else:
    sys.exit("no damaged byte was detected inside the frame")
decoded = subprocess.run(["zstd", "-dc", "inner-damage.zst"], capture_output=True).stdout
sound = next((i for i, (a, b) in enumerate(zip(decoded, plain)) if a != b), len(decoded))
line = int(said.group(1))
handled = sum(len(l) for l in plain.split(b"\n")[: line - 1]) + line - 1  # bytes before it
assert handled >= sound - (128 << 10), (at, line, handled, sound)
PY
pass "damage inside a zstd frame: the lines decoded before it are handled"

# A skippable frame first (as pzstd writes) is zstd too; an input that only starts like one and
# then fails says why it was read as zstd.
{ printf '\x5e\x2a\x4d\x18\x04\x00\x00\x00meta'; head -n 100 events.ndjson | zstd -q -c; } \
  > skippable.zst
ks split -k user_id -n 4 -o - -q skippable.zst > skippable.out
head -n 100 events.ndjson > first100.ndjson
expect_same_file skippable.out first100.ndjson "an input that starts with a skippable frame"
printf 'P*M\x18 is a line\nsecond line\n' > looks-skippable.txt
run_status ks split --format line -n 2 -o - -q looks-skippable.txt
expect_eq "$STATUS" 1 "text that starts like a skippable frame"
expect_contains "$ERR" "looks-skippable.txt:1: truncated zstd input: the data ends inside a frame \
(it was read as zstd because its first four bytes are those of a zstd skippable frame, 50-5F 2A \
4D 18 in hex)" "the error says why it was read as zstd"
[[ $(ks split -k user_id -n 4 -o - -q truncated.zst 2>&1 > /dev/null) != *"read as zstd because"* ]] ||
  fail "a zstd frame cut short needs no such note"
head -c 40 skippable.zst > skippable-cut.zst  # (inside the frame after the skippable one)
run_status ks split -k user_id -n 4 -o - -q skippable-cut.zst
expect_eq "$STATUS" 1 "a zstd input cut short after its skippable frame"
[[ $ERR == *"truncated zstd input"* && $ERR != *"read as zstd because"* ]] ||
  fail "a zstd input cut short after its skippable frame: not called maybe not zstd: $ERR"
printf '\x5e\x2a\x4d\x18\x04\x00\x00\x00meta and then no frame\n' > no-frame.txt
run_status ks split --format line -n 2 -o - -q no-frame.txt
expect_contains "$ERR" "(it was read as zstd because" "no frame after the skippable one: the note"
pass "skippable frames"

# A valid stream that needs a window beyond the decoder's limit (zstd --long=30) is not called
# corrupt: the message says what to do.
head -n 200 events.ndjson | zstd -q --long=30 -c > long-window.zst
run_status ks split -k user_id -n 4 -o - -q long-window.zst
expect_eq "$STATUS" 1 "exit status for a window beyond the limit"
expect_contains "$ERR" "long-window.zst:1: zstd input written with a window larger than 128 MiB" \
  "names the file and the cause"
expect_contains "$ERR" "zstd -dc --long=31 FILE | keyshard" "says what to do"
pass "a zstd window beyond the limit"

# A partition that stays empty is still a zstd stream (one empty frame), which zstd -dc reads
# as nothing; so is a compressed standard output with no events.
printf '{"k":"a"}\n' > one.ndjson
rm -rf sparse
ks split -k k -n 3 --compress zstd -o sparse -q one.ndjson
for f in sparse/part-*.ndjson.zst; do
  zstd -q -dc "$f" > /dev/null || fail "zstd -dc $f: not a zstd stream"
done
expect_eq "$(zstd -q -dc sparse/part-*.ndjson.zst)" '{"k":"a"}' "the one event"
: | ks split -k k -n 2 --compress zstd -o - -q > none.zst
zstd -q -dc none.zst > none.out ||
  fail "no events on a compressed standard output: not a zstd stream"
expect_eq "$(wc -c < none.out)" 0 "no events on a compressed standard output: nothing in it"
pass "empty compressed outputs are valid zstd streams"

# Another compressor's output, an archive or UTF-16 text is refused, naming it and what turns it
# into text, before anything is written: read as text, it would be a few "lines" of garbage,
# each a dead letter.
printf '{"k":"a"}\n{"k":"b"}\n' > plain.ndjson
gzip -c plain.ndjson > plain.ndjson.gz
printf '\375\067\172\130\132\000garbage' > fake.xz
printf '\004\042\115\030garbage' > fake.lz4
printf 'BZh91AY&SYgarbage' > fake.bz2
printf 'PK\003\004garbage' > fake.zip
printf '\377\376{\000"\000' > utf16.ndjson
for input in "plain.ndjson.gz|gzip-compressed|zcat" "fake.xz|xz-compressed|xzcat" \
  "fake.lz4|lz4-compressed|lz4cat" "fake.bz2|bzip2-compressed|bzcat" \
  "fake.zip|a zip archive|unzip -p" \
  "utf16.ndjson|UTF-16 text (as some Windows programs save it)|iconv -f UTF-16 -t UTF-8"; do
  IFS='|' read -r file what reader <<< "$input"
  rm -rf other
  run_status ks split -k k -n 2 -o other "$file"
  expect_eq "$STATUS" 1 "$file: exit status"
  expect_contains "$ERR" "keyshard: $file: is $what; keyshard reads UTF-8 text, and zstd by its \
magic bytes: turn it into text on the way in, e.g. \`$reader $file | keyshard ... -\`" \
    "$file: why, and what to do"
  [ ! -e other ] || fail "$file: DIR left behind"
done
run_status ks stats -k k -n 2 - < plain.ndjson.gz
expect_eq "$STATUS" 1 "gzip on standard input: exit status"
expect_contains "$ERR" "keyshard: <stdin>: is gzip-compressed; keyshard reads UTF-8 text, and \
zstd by its magic bytes: turn it into text on the way in, e.g. \`zcat FILE | keyshard ... -\`" \
  "gzip on standard input: why"
pass "compressed, archived and UTF-16 inputs are refused, saying how to read them"
