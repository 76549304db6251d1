#!/usr/bin/env bash
# --on-bad dead-letter|skip|fail and --missing-key: bad lines are never dropped silently.
source "$(dirname "$0")/lib.sh"

cat > in.ndjson <<'JSON'
{"id":"a","n":1}
{"n":2}
{"id":"b","n":3} trailing
[1,2,3]
{"id":"c","n":5}
JSON

ks split -k id -n 2 -o dl -q in.ndjson
expect_eq "$(summary_field dl dead_lettered)" 3 "dead-lettered"
expect_eq "$(wc -l < dl/dead-letter.ndjson)" 3 "dead-letter records"
python3 - dl/dead-letter.ndjson <<'PY'
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
assert [(r["line"], r["reason"]) for r in records] == [
    (2, "missing_key"), (3, "invalid_json"), (4, "not_object")], records
assert records[0]["text"] == '{"n":2}' and records[0]["source"] == "in.ndjson", records[0]
assert records[1]["offset"] == len('{"id":"a","n":1}\n{"n":2}\n'), records[1]
PY
pass "dead-letter records"

ks split -k id -n 2 -o skip --on-bad skip -q in.ndjson
expect_eq "$(summary_field skip skipped)" 3 "skipped"
expect_eq "$(stat -c %s skip/dead-letter.ndjson 2>/dev/null || echo none)" none "no dead-letter file under skip"
pass "skip"

run_status ks split -k id -n 2 -o failed --on-bad fail -q in.ndjson
expect_eq "$STATUS" 65 "exit status under --on-bad fail"
expect_eq "$ERR" "keyshard: in.ndjson:2: missing_key: id (--on-bad fail)
keyshard: once that line is corrected in the same file (not in a new one, as \`sed -i\` and most \
editors write), \`keyshard resume failed\` continues the run from its last checkpoint; or start \
over with --force and --on-bad dead-letter, which sets bad lines aside" \
  "fail message, and how to go on"
expect_eq "$(cat failed/part-*.ndjson)" '{"id":"a","n":1}' "only lines before the bad one are written"
# As the message says: the bad lines corrected (in the same file), resume completes the run.
sed 's/^{"n":2}$/{"id":"d","n":2}/; s/ trailing$//; s/^\[1,2,3\]$/{"id":"e","n":4}/' in.ndjson \
  > corrected.ndjson
cp in.ndjson in-kept.ndjson
cat corrected.ndjson > in.ndjson
run_status ks resume -q failed
expect_eq "$STATUS" 0 "resume once the line is corrected"
ks split -k id -n 2 -o corrected -q corrected.ndjson
for f in corrected/part-*.ndjson; do
  expect_same_file "failed/${f#corrected/}" "$f" "resume after --on-bad fail, the lines corrected"
done
cp in-kept.ndjson in.ndjson
# Without DIR there is nothing to resume: the message stands alone.
run_status ks split -k id -n 2 -o - --on-bad fail -q in.ndjson
expect_eq "$ERR" "keyshard: in.ndjson:2: missing_key: id (--on-bad fail)" "fail message with -o -"
pass "fail"

ks split -k id -n 4 --missing-key partition:3 -o missing -q in.ndjson
expect_contains "$(cat missing/part-00003.ndjson)" '{"n":2}' "keyless event in partition 3"
expect_eq "$(summary_field missing missing_key_routed)" 1 "missing_key_routed"
expect_eq "$(summary_field missing dead_lettered)" 2 "the other bad lines are still bad"
pass "--missing-key partition:P"

# With -o - and no --dead-letter, dead letters go to stderr as records.
run_status ks split -k id -n 2 -o - -q in.ndjson
expect_eq "$STATUS" 0 "exit status"
expect_eq "$OUT" $'{"id":"a","n":1}\n{"id":"c","n":5}' "stdout has the good events in order"
expect_eq "$(echo "$ERR" | grep -c '"reason"')" 3 "dead letters on stderr"
ks split -k id -n 2 -o - -q --dead-letter dead.ndjson in.ndjson > /dev/null
expect_eq "$(wc -l < dead.ndjson)" 3 "--dead-letter FILE"
pass "dead letters with -o -"

# A key that no line has (a -k spelt otherwise than in the events) is warned of, even with -q,
# by split, stats and plan; a key that some line has is not.
no_key='no line has the key -k idd (3 lines without it): is it spelt as in the events?'
run_status ks split -k idd -n 2 -o no-key -q in.ndjson
expect_eq "$STATUS" 0 "a key no line has: the run still succeeds"
expect_contains "$ERR" "keyshard: warning: $no_key" "split warns"
run_status ks split -k idd -n 2 --missing-key partition:1 -o no-key-routed -q in.ndjson
expect_contains "$ERR" "$no_key" "split warns when the keyless lines are routed"
run_status ks stats -k idd -n 2 in.ndjson
expect_contains "$ERR" "$no_key" "stats warns"
run_status ks stats -k idd -n 2 --missing-key partition:1 in.ndjson
expect_contains "$ERR" "$no_key" "stats warns when the keyless lines are routed"
run_status ks plan -k idd --from 2 --to 3 in.ndjson
expect_contains "$ERR" "$no_key" "plan warns"
printf 'a,b\nc,d\n' > not-json.txt
run_status ks plan -k id --from 2 --to 3 not-json.txt
expect_eq "$ERR" "" "no such warning when the lines are not JSON objects"
# No line a JSON object at all (CSV given as JSON): split and stats say so, naming the formats.
not_json="warning: no line is a JSON object (2 lines not one): is the input JSON lines, an object a \
line? A JSON array or a document over many lines becomes that with jq -c '.[]' or jq -c .; for \
other text, use --format delimited or --format line"
run_status ks split -k id -n 2 -o csv-as-json -q not-json.txt
expect_eq "$STATUS" 0 "CSV as JSON: the run still succeeds"
expect_contains "$ERR" "$not_json" "CSV as JSON: split warns"
run_status ks stats -k id -n 2 not-json.txt
expect_contains "$ERR" "$not_json" "CSV as JSON: stats warns"
# Lines meant as objects that are not well-formed JSON (single quotes, a trailing comma, a lone
# surrogate): the warning says where to read why, not to try another format.
printf "{'id': 'a'}\n{\"id\":\"b\",}\n{\"id\":\"\\\\ud800\"}\n" > malformed.ndjson
malformed="warning: no line is a valid JSON object (3 lines begin as one but are not well-formed \
JSON)"
run_status ks split -k id -n 2 -o malformed -q malformed.ndjson
expect_eq "$STATUS" 0 "malformed objects: the run still succeeds"
expect_contains "$ERR" "$malformed: each one's dead letter in malformed/dead-letter.ndjson says why" \
  "malformed objects: split names the dead-letter file"
[[ "$ERR" != *"--format delimited"* ]] || fail "malformed objects: no advice of other formats"
expect_eq "$(grep -c '"reason":"invalid_json"' malformed/dead-letter.ndjson)" 3 \
  "malformed objects: each is a dead letter"
run_status ks split -k id -n 2 -o - --on-bad skip malformed.ndjson
expect_contains "$ERR" "$malformed: --on-bad fail stops at the first and says why" \
  "malformed objects, skipped"
run_status ks split -k id -n 2 -o - malformed.ndjson
expect_contains "$ERR" "$malformed: each one's dead letter on standard error says why" \
  "malformed objects, dead letters on standard error"
run_status ks stats -k id -n 2 malformed.ndjson
expect_contains "$ERR" "$malformed: keyshard split writes each one's reason in its dead letters" \
  "malformed objects: stats"
head -1 malformed.ndjson > one-malformed.ndjson
run_status ks stats -k id -n 2 one-malformed.ndjson
expect_contains "$ERR" "(1 line begins as one but is not well-formed JSON)" "one malformed object"
# An --incremental run whose new lines all lack the key: its -k is the one earlier runs found.
printf '{"id":"a"}\n' > growing.ndjson
ks split -q --incremental -k id -n 2 -o growing growing.ndjson
printf '{"heartbeat":1}\n' >> growing.ndjson
run_status ks split -q --incremental -k id -n 2 -o growing growing.ndjson
expect_eq "$ERR" "" "no warning in a later --incremental run"
printf 'a\tb\n' > fields.tsv
run_status ks split --format delimited -k 3 -n 2 -o no-field -q fields.tsv
expect_contains "$ERR" "no line has the key -k 3 (1 line without it): fields are numbered from 1" \
  "delimited: the field"
run_status ks split -k id -n 2 -o has-key -q in.ndjson
expect_eq "$ERR" "" "no warning when some line has the key"
# A dotted -k that no line has: the hint is about dots in names, not the dotted path it is; a
# key with a space shows quoted.
run_status ks split -k user.idd -n 2 -o dotted -q in.ndjson
expect_contains "$ERR" "no line has the key -k user.idd (3 lines without it): is it spelt as in \
the events? (a dot separates nested fields; a name that holds a dot is written with \\., e.g. \
-k 'user\\.id')" "a dotted key no line has"
run_status ks split -k 'id ' -n 2 -o spaced -q in.ndjson
expect_contains "$ERR" "no line has the key -k 'id ' (3 lines without it)" "a key with a space"
pass "a key that no line has is warned of"

# A dead-letter file that cannot be created stops the run before anything is written, and takes
# the partition files it had created with it: the retry needs no --force. A file that was there
# before is left.
rm -rf early && mkdir early && echo keep > early/part-00001.ndjson
run_status ks split -k id -n 4 -o early --force --dead-letter missing-dir/dead.ndjson in.ndjson
expect_eq "$STATUS" 1 "exit status when the dead-letter file cannot be created"
expect_contains "$ERR" "missing-dir/dead.ndjson: cannot create" "the error names the file"
expect_eq "$(cd early && find . -type f ! -path './.keyshard/*' | sort | tr '\n' ' ')" \
  "./part-00001.ndjson " "only the file that was there before is left"
rm -rf early2
run_status ks split -k id -n 4 -o early2 --dead-letter missing-dir/dead.ndjson in.ndjson
expect_eq "$STATUS" 1 "exit status, fresh directory"
ks split -q -k id -n 4 -o early2 in.ndjson
expect_eq "$(cat early2/part-*.ndjson | wc -l)" 2 "the retry without --force writes every event"
pass "a failed start leaves no partition files behind"

# An input whose name is not UTF-8: the summary and the dead letters stay valid JSON, and the
# dead letter gives the name exactly (base64). A --name that is not UTF-8 is recorded exactly, so
# a later --incremental run writes on into the same files.
name=$(printf 'in\xff.ndjson')
printf '{"k":"x"}\nnot json\n' > "$name"
rm -rf latin
ks split -q -k k -n 2 --name "$(printf 'p\xe9-{partition}.ndjson')" -o latin --incremental "$name"
python3 - <<'PY' || fail "a name that is not UTF-8 in the summary and the dead letters"
import base64, json
json.load(open("latin/keyshard-summary.json", "rb"))
letter = json.loads(open("latin/dead-letter.ndjson", "rb").readline())
assert base64.b64decode(letter["source_base64"]) == b"in\xff.ndjson", letter
PY
printf '{"k":"y"}\n' >> "$name"
ks split -q -k k -n 2 --name "$(printf 'p\xe9-{partition}.ndjson')" -o latin --incremental "$name"
expect_eq "$(cat latin/p*-*.ndjson | sort | tr -d '\n')" '{"k":"x"}{"k":"y"}' \
  "the second --incremental run writes on into the files named with Latin-1 bytes"
expect_eq "$(ls latin | wc -l)" 4 "two partition files, the dead letters and the summary"
pass "names that are not UTF-8: valid JSON, exact bytes"

# An invalid line that ends a parse window (about 128 KiB of lines) is judged on its own bytes:
# a next line starting with ':' once made `{"k":"a","k"""]}` an object with the key "a".
python3 - > window-end.ndjson <<'PY'
print('{"k":"pad","p":"' + "x" * (131072 - 36) + '"}')
print('{"k":"a","k":"b","k"""]}')
print(':"c"}')
print('{"k":"d"}')
PY
rm -rf window-end
ks split -q -k k -n 2 -o window-end window-end.ndjson
expect_eq "$(cat window-end/part-*.ndjson | cut -c1-12 | sort | tr -d '\n')" \
  '{"k":"d"}{"k":"pad","' "the two valid lines partitioned"
expect_eq "$(python3 -c 'import json, sys
print(" ".join(str(json.loads(l)["line"]) for l in open(sys.argv[1])))' \
  window-end/dead-letter.ndjson)" "2 3" "the invalid line at the window's end dead-lettered"
pass "a window's last line is judged on its own bytes"

# --no-validate: the key is read up to where it is found, in windows of lines as when validating
# (the scan stops at the key) or, for any line the scan does not confirm, alone. On valid events
# it gives the partitions of a validating run byte for byte; damage after the key goes unnoticed,
# but a line that is not an object, has no key or does not end with '}' is still a bad line.
"$GEN_EVENTS" --events 20000 --seed 5 > events.ndjson
ks split -q -k user_id -k account.id -n 8 -o checked events.ndjson
ks split -q -k user_id -k account.id -n 8 --no-validate -o trusted events.ndjson
for f in checked/part-*; do
  expect_same_file "trusted/$(basename "$f")" "$f" "--no-validate on valid events: $(basename "$f")"
done
expect_eq "$(summary_field trusted dead_lettered)" 0 "--no-validate on valid events: no bad line"
{
  head -n 3000 events.ndjson
  printf '%s\n' '{"id":"a","x":tru}' '{"id":"b"} trailing' '[1,2]' '{"n":2}' \
    '{"id":"c","n":5}' '{"id":"d","s":"open}' '{"id":"e","z":1}'
  head -n 3000 events.ndjson
} | sed 's/"user_id"/"id"/' > damaged.ndjson
ks split -q -k id -n 4 -o damaged-checked damaged.ndjson
ks split -q -k id -n 4 --no-validate -o damaged-trusted damaged.ndjson
python3 - damaged-checked damaged-trusted <<'PY' || fail "--no-validate: what it lets through"
import json, sys
def letters(directory):
    return [(r["line"], r["reason"]) for r in map(json.loads, open(directory + "/dead-letter.ndjson"))]
checked, trusted = letters(sys.argv[1]), letters(sys.argv[2])
assert checked == [(3001, "invalid_json"), (3002, "invalid_json"), (3003, "not_object"),
                   (3004, "missing_key"), (3006, "invalid_json")], checked
# Damage after the key goes unnoticed; the rest are still bad lines.
assert trusted == checked[1:], trusted
PY
expect_contains "$(cat damaged-trusted/part-*.ndjson)" '{"id":"a","x":tru}' \
  "--no-validate: a line damaged after its key is partitioned"
expect_eq "$(cat damaged-trusted/part-*.ndjson | wc -l)" 6003 "--no-validate: lines partitioned"
pass "--no-validate: same partitions on valid events; not an object, no key or no closing brace still bad"

# Lines ended by a carriage return alone read as one line; the bad line and the error of a line
# too long both say what the carriage returns may mean.
printf '{"id":"a"}\r{"id":"b"}\r' > cr-only.ndjson
ks split -q -k id -n 2 -o cr-only cr-only.ndjson
expect_contains "$(cat cr-only/dead-letter.ndjson)" \
  '"detail":"content after the JSON value, past a carriage return (are the lines ended by CR alone?)"' \
  "a bad line of CR-ended lines"
printf '{"id":"a"} {"id":"b"}\n' > two-values.ndjson
ks split -q -k id -n 2 -o two-values two-values.ndjson
expect_contains "$(cat two-values/dead-letter.ndjson)" '"detail":"content after the JSON value",' \
  "two values on a line, no carriage return"
python3 -c "import sys; sys.stdout.write(''.join('{\"id\":\"%d\"}\r' % i for i in range(1000)))" \
  > cr-long.ndjson
run_status ks split -q -k id -n 2 --max-line-size 4KiB -o cr-long cr-long.ndjson
expect_eq "$STATUS" 1 "a line of CR-ended lines longer than --max-line-size"
expect_contains "$ERR" "(it holds carriage returns: are the lines ended by CR alone? convert them \
first, e.g. tr '\r' '\n')" "the error says what the carriage returns may mean"
# A CRLF line whose CR is just past --max-line-size is too long, but not ended by CR alone.
python3 -c "import sys; sys.stdout.write('{\"id\":\"%s\"}\r\n' % ('x' * 4087))" > crlf-long.ndjson
run_status ks split -q -k id -n 2 --max-line-size 4KiB -o crlf-long crlf-long.ndjson
expect_eq "$STATUS" 1 "a CRLF line one byte too long"
expect_contains "$ERR" "the line is longer than --max-line-size (4,096 bytes)" "says so"
[[ "$ERR" != *"carriage returns"* ]] || fail "a CRLF's CR past the limit is no CR-ended line"
pass "lines ended by a carriage return alone are named as such"
