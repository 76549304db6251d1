#!/usr/bin/env bash
# Lines as they come in real files: CRLF, empty lines, no final newline, a 10 MiB line, binary
# garbage and invalid UTF-8. Nothing is lost: every line is written or dead-lettered.
source "$(dirname "$0")/lib.sh"

# CRLF: the '\r' stays in the output line and does not change the key.
printf '{"k":"a","v":1}\r\n{"k":"b","v":2}\r\n' > crlf.ndjson
printf '{"k":"a","v":1}\n{"k":"b","v":2}\n' > lf.ndjson
ks split -k k -n 4 -o crlf -q crlf.ndjson
ks split -k k -n 4 -o lf -q lf.ndjson
for f in lf/part-*.ndjson; do
  expect_eq "$(tr -d '\r' < "crlf/$(basename "$f")")" "$(cat "$f")" "CRLF partitions like LF"
done
expect_eq "$(cat crlf/part-*.ndjson | tr -cd '\r' | wc -c)" 2 "the CRs are kept"
pass "CRLF"

# No final newline: the last line is still an event, written with a newline.
printf '{"k":"a"}\n{"k":"z"}' > nofinal.ndjson
ks split -k k -n 1 -o nofinal -q nofinal.ndjson
expect_eq "$(cat nofinal/part-00000.ndjson)" $'{"k":"a"}\n{"k":"z"}' "last line without newline"
expect_eq "$(tail -c 1 nofinal/part-00000.ndjson | od -An -c | tr -d ' ')" '\n' "newline added"
pass "no final newline"

# Empty lines are bad lines (not JSON objects), reported with their line numbers.
printf '{"k":"a"}\n\n   \n{"k":"b"}\n' > empty.ndjson
ks split -k k -n 2 -o empty -q empty.ndjson
expect_eq "$(summary_field empty events_written)" 2 "events around empty lines"
expect_eq "$(summary_field empty dead_lettered)" 2 "empty lines dead-lettered"
expect_contains "$(cat empty/dead-letter.ndjson)" '"line":2' "line number of the first empty line"
expect_contains "$(cat empty/dead-letter.ndjson)" '"reason":"empty_line"' "reason"
pass "empty lines"

# A 10 MiB line passes through whole.
python3 -c 'import sys; sys.stdout.write("{\"k\":\"big\",\"pad\":\"" + "x" * (10 << 20) + "\"}\n{\"k\":\"small\"}\n")' > big.ndjson
ks split -k k -n 3 -o big -q big.ndjson
cat big/part-*.ndjson | sort > got.sorted
sort big.ndjson > want.sorted
expect_same_file got.sorted want.sorted "10 MiB line"
pass "10 MiB line"

# A line longer than --max-line-size stops the run with a clear error.
run_status ks split -k k -n 3 --max-line-size 1MiB -o toolong -q big.ndjson
expect_eq "$STATUS" 1 "exit status for a line over --max-line-size"
expect_contains "$ERR" "big.ndjson:1: the line is longer than --max-line-size" \
  "error names the file and the line"
expect_contains "$ERR" "--max-line-size (1,048,576 bytes); it starts at byte 0" \
  "error names the limit and the byte"
# (The first line: no line was processed, so the run keeps nothing, and the retry with a
# larger limit needs no --force.)
expect_contains "$ERR" "no line was processed, so no checkpoint is kept; once that is fixed, run" \
  "says that nothing is kept"
[ ! -e toolong ] || fail "nothing kept of a run stopped by its first line: $(find toolong)"
# Its number counts the lines of earlier chunks (good, bad and empty) of its own input only.
python3 -c 'import sys; sys.stdout.write("".join("{\"k\":\"%d\"}\n" % i for i in range(30000)))' \
  > first.ndjson
python3 -c '
import sys
lines = ["{\"k\":\"%d\"}\n" % i if i % 100 else "not json\n" for i in range(20000)]
lines[500] = "\r\n"
sys.stdout.write("".join(lines) + "{\"k\":\"" + "y" * (2 << 20) + "\"}\n{\"k\":\"after\"}\n")
' > second.ndjson
run_status ks split -k k -n 3 --max-line-size 1MiB --chunk-size 64KiB -j 2 -o toolong2 -q \
  first.ndjson second.ndjson
expect_eq "$STATUS" 1 "exit status for a line over --max-line-size in a second input"
offset=$(head -n 20000 second.ndjson | wc -c | sed -E ":a;s/([0-9])([0-9]{3})($|,)/\1,\2\3/;ta")
expect_contains "$ERR" "second.ndjson:20001: the line is longer than --max-line-size" \
  "line number of the long line, after several chunks"
expect_contains "$ERR" "it starts at byte $offset" "its byte offset"
expect_contains "$ERR" "to raise --max-line-size, start over with --force" \
  "says how to raise the limit (resume keeps it)"
for command in "stats -k k -n 3" "plan -k k --from 3 --to 4"; do
  run_status ks $command --max-line-size 1MiB --chunk-size 64KiB first.ndjson second.ndjson
  expect_eq "$STATUS" 1 "$command: exit status for a line over --max-line-size"
  expect_contains "$ERR" "second.ndjson:20001: the line is longer than --max-line-size" \
    "$command: the line number of the long line"
done
# An --incremental input rewritten in place is read again from 0: its long first line is line 1.
python3 -c 'import sys; sys.stdout.write("".join("{\"k\":\"%d\"}\n" % i for i in range(1000)))' \
  > rewritten.ndjson
ks split -k k -n 3 --incremental --max-line-size 4KiB -o rewritten -q rewritten.ndjson
python3 -c 'import sys; sys.stdout.write("{\"k\":\"" + "z" * 50000 + "\"}\n")' > longer.ndjson
cat longer.ndjson > rewritten.ndjson
run_status ks split -k k -n 3 --incremental --max-line-size 4KiB -o rewritten -q rewritten.ndjson
expect_eq "$STATUS" 1 "exit status for a long line in an input read again from 0"
expect_contains "$ERR" "rewritten.ndjson:1: the line is longer than --max-line-size" \
  "a reread input counts its lines from 1"
pass "line over --max-line-size"

# Binary garbage and invalid UTF-8 are dead-lettered, byte-exact (base64 when not UTF-8).
printf '{"k":"a"}\n\x00\x01\x02\xff\xfe garbage\n{"k":"\xc3\x28"}\n{"k":"b"}\n' > binary.ndjson
ks split -k k -n 2 -o binary -q binary.ndjson
expect_eq "$(summary_field binary events_written)" 2 "valid events around garbage"
expect_eq "$(summary_field binary dead_lettered)" 2 "garbage dead-lettered"
python3 - binary/dead-letter.ndjson <<'PY'
import base64, json, sys
records = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
texts = [base64.b64decode(r["text_base64"]) if "text_base64" in r else r["text"].encode() for r in records]
assert texts == [b"\x00\x01\x02\xff\xfe garbage", b'{"k":"\xc3\x28"}'], texts
assert [r["line"] for r in records] == [2, 3], records
assert all(r["reason"] == "invalid_json" for r in records), records
PY
pass "binary garbage and invalid UTF-8"

# Deeply nested input is refused as a bad line, not a crash.
python3 -c 'print("{\"k\":" + "[" * 100000 + "]" * 100000 + "}")' > deep.ndjson
ks split -k k -n 2 -o deep -q deep.ndjson
expect_eq "$(summary_field deep dead_lettered)" 1 "deep nesting dead-lettered"
pass "deep nesting"

# Reconciliation on a mix: read = written + dead-lettered + skipped.
cat crlf.ndjson empty.ndjson binary.ndjson nofinal.ndjson > mix.ndjson
ks split -k k -n 3 -o mix -q mix.ndjson
read_=$(summary_field mix lines_read)
sum=$(( $(summary_field mix events_written) + $(summary_field mix dead_lettered) + $(summary_field mix skipped) ))
expect_eq "$sum" "$read_" "counts reconcile"
expect_eq "$read_" "$(( $(wc -l < mix.ndjson) + 1 ))" "lines read (last has no newline)"
pass "counts reconcile"

# Millions of empty lines (a corrupt or padded file): every one is a bad line, counted, and the
# chunks are cut by line count, so memory stays bounded (it was 300 MiB for 8 million empty
# lines, when a 1 MiB chunk could hold a million lines). RSS is not checked in sanitizer builds,
# whose shadow memory dwarfs it (and which count a fifth as many lines).
empties=$(scaled 8000000)
python3 -c "import sys; sys.stdout.write('\n' * $empties + '{\"k\": 1}\n')" > empty-lines.ndjson
for policy in skip dead-letter; do
  rm -rf empties
  peak_kib=$(python3 - "$KEYSHARD" "$policy" <<'PY'
import resource, subprocess, sys
subprocess.run([sys.argv[1], "split", "-q", "-k", "k", "-n", "8", "--on-bad", sys.argv[2],
                "-o", "empties", "empty-lines.ndjson"], check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
)
  expect_eq "$(summary_field empties lines_read)" $((empties + 1)) \
    "8 million empty lines ($policy): lines read"
  expect_eq "$(summary_field empties events_written)" 1 "8 million empty lines ($policy): the event"
  if [ "${SANITIZED:-0}" != 1 ]; then
    [ "$peak_kib" -lt $((150 * 1024)) ] ||
      fail "8 million empty lines ($policy): peak RSS $peak_kib KiB, more than 150 MiB"
  fi
done
expect_eq "$(wc -l < empties/dead-letter.ndjson)" "$empties" "every empty line is dead-lettered"
pass "8 million empty lines: counted, dead-lettered, in bounded memory"

# A 40 MB line of small values is validated without a parse tree many times its size: peak
# memory stays within a few copies of the line (the tree took it to 790 MB). Its key, after the
# long value, escaped, and a composite part that is a number, are still found; a long line with
# an error in its last bytes is still a bad line.
python3 - <<'PY'
with open("long-values.ndjson", "w") as out:
    out.write('{"v":[' + "1," * 20000000 + '1],"k":"caf\\u00e9","n":-1.5e3}\n')
    out.write('{"k":"short","n":2}\n')
with open("long-bad.ndjson", "w") as out:
    out.write('{"v":[' + "1," * 20000000 + '1,],"k":"bad"}\n')
PY
peak_kib=$(python3 - "$KEYSHARD" <<'PY'
import resource, subprocess, sys
subprocess.run([sys.argv[1], "split", "-q", "-k", "k", "-k", "n", "-n", "4", "--annotate", "key",
                "-o", "long-values", "long-values.ndjson"], check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
)
expect_eq "$(summary_field long-values events_written)" 2 "a long line and a short one written"
expect_eq "$(grep -ho '"_key":"[^"]*"' long-values/part-*.ndjson | sort | tr '\n' ' ')" \
  "$(printf '"_key":"caf\xc3\xa9\\u001f-1.5e3" "_key":"short\\u001f2" ')" "the keys of the long line and the short one"
if [ "${SANITIZED:-0}" != 1 ]; then
  [ "$peak_kib" -lt $((400 * 1024)) ] ||
    fail "a 40 MB line of small values: peak RSS $peak_kib KiB, more than 400 MiB"
fi
ks split -q -k k -n 4 -o long-bad long-bad.ndjson
expect_eq "$(summary_field long-bad dead_lettered)" 1 "a long line with an error at its end is bad"
pass "a long line of small values: validated in memory near its size"

# A 40 MiB bad line of control characters is six times that in its dead-letter record
# ("\u0001" each): the record is written a piece at a time, so memory stays near the line's size
# (it took 570 MiB whole). The record is exact, and so is one in base64.
control_mib=$(scaled 40)
python3 -c 'import sys
mib = int(sys.argv[1]) << 20
sys.stdout.buffer.write(b"{\"k\":\"a\"}\n" + b"\x01" * mib + b"\n" + b"\xff" * (1 << 20) + b"\n")' \
  "$control_mib" > control.ndjson
peak_kib=$(python3 - "$KEYSHARD" <<'PY'
import resource, subprocess, sys
subprocess.run([sys.argv[1], "split", "-q", "-k", "k", "-n", "2", "-o", "control",
                "control.ndjson"], check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
)
python3 - "$control_mib" <<'PY' || fail "the dead-letter records of long bad lines"
import base64, json, sys
records = [json.loads(line) for line in open("control/dead-letter.ndjson", "rb")]
assert [r["line"] for r in records] == [2, 3], records
assert records[0]["text"] == "\x01" * (int(sys.argv[1]) << 20)
assert base64.b64decode(records[1]["text_base64"]) == b"\xff" * (1 << 20)
PY
if [ "${SANITIZED:-0}" != 1 ]; then
  [ "$peak_kib" -lt $((200 * 1024)) ] ||
    fail "a 40 MiB line of control characters: peak RSS $peak_kib KiB, more than 200 MiB"
fi
# The same on standard error (-o - without --dead-letter): the record goes out in pieces,
# with nothing else between them (it took 570 MiB whole).
peak_kib=$(python3 - "$KEYSHARD" <<'PY'
import resource, subprocess, sys
with open("control.out", "wb") as out, open("control.err", "wb") as err:
    subprocess.run([sys.argv[1], "split", "-q", "-k", "k", "-n", "2", "-o", "-",
                    "control.ndjson"], stdout=out, stderr=err, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
)
expect_same_file control.err control/dead-letter.ndjson "the records on standard error"
if [ "${SANITIZED:-0}" != 1 ]; then
  [ "$peak_kib" -lt $((200 * 1024)) ] ||
    fail "a 40 MiB line of control characters to stderr: peak RSS $peak_kib KiB, over 200 MiB"
fi
pass "a long bad line is dead-lettered in memory near its size"

# A delimited key far along a long line: only the fields asked for are kept, not each field
# before them (a 32 MiB line of commas took 650 MiB for its last field). Its key is exact.
python3 -c 'import sys
sys.stdout.write("x," * (16 << 20) + "last\n" + "a,b\n")' > commas.txt
peak_kib=$(python3 - "$KEYSHARD" <<'PY'
import resource, subprocess, sys
subprocess.run([sys.argv[1], "split", "-q", "--format", "delimited", "--delimiter", ",",
                "-k", str((16 << 20) + 1), "-k", "1", "-n", "2", "-o", "commas", "commas.txt"],
               check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
)
expect_eq "$(summary_field commas events_written)" 1 "the last field of a long delimited line"
expect_eq "$(summary_field commas dead_lettered)" 1 "a short line without that field"
expect_eq "$(ks which -n 2 "$(printf 'last\037x')")" \
  "$(grep -l '^x,x,' commas/part-*.ndjson | grep -o '[0-9]*\.ndjson' | sed 's/^0*\([0-9]\)/\1/; s/\.ndjson//')" \
  "the long line's partition is that of its key, the last field and the first"
if [ "${SANITIZED:-0}" != 1 ]; then
  [ "$peak_kib" -lt $((250 * 1024)) ] ||
    fail "the last field of a 32 MiB delimited line: peak RSS $peak_kib KiB, over 250 MiB"
fi
pass "a delimited key far along a long line, in memory near the line's size"

# An input whose name is not UTF-8 is named in the summary and in stats --json by its bytes,
# in base64, as in the checkpoint (not with U+FFFD in place of a byte).
odd_name=$(printf 'odd\377name.ndjson')
printf '{"k":"a"}\n' > "$odd_name"
ks split -q -k k -n 2 -o odd-out "$odd_name"
inputs_of() { python3 -c 'import json, sys; print(json.load(sys.stdin)["inputs"])'; }
odd_base64=$(printf 'odd\377name.ndjson' | base64)
expect_eq "$(inputs_of < odd-out/keyshard-summary.json)" "[{'base64': '$odd_base64'}]" \
  "the summary's input name"
expect_eq "$(ks stats -k k -n 2 --json "$odd_name" | inputs_of)" "[{'base64': '$odd_base64'}]" \
  "stats --json's input name"
pass "input names that are not UTF-8 keep their bytes"

# An input that gives a record a read (a socket of records; /dev/kmsg), where a read drops what
# does not fit its buffer: the first read, which sniffs the magic bytes, loses no line.
python3 - "$KEYSHARD" <<'PY' || fail "a socket of records on standard input"
import socket, subprocess, sys
ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
theirs.send(b'{"id":"a","n":1}\n{"id":"b","n":2}\n')
theirs.send(b'{"id":"c","n":3}\n')
theirs.shutdown(socket.SHUT_WR)
out = subprocess.run([sys.argv[1], "split", "-q", "-k", "id", "-n", "1", "-o", "-"], stdin=ours,
                     capture_output=True, check=True).stdout
assert out == b'{"id":"a","n":1}\n{"id":"b","n":2}\n{"id":"c","n":3}\n', out
PY
pass "a socket of records on standard input: every line"
