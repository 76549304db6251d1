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
expect_eq "$ERR" "keyshard: in.ndjson:2: missing_key: id (--on-bad fail)" "fail message"
expect_eq "$(cat failed/part-*.ndjson)" '{"id":"a","n":1}' "only lines before the bad one are written"
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
