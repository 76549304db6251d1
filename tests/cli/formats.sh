#!/usr/bin/env bash
# --format delimited and line, composite keys and nested paths, end to end.
source "$(dirname "$0")/lib.sh"

printf '10.0.0.1 - GET /a\n10.0.0.2 - GET /b\r\n10.0.0.1 - GET /c\nshort\n' > access.log
ks split --format delimited --delimiter space -k 1 -n 4 -o delim -q access.log
p=$(ks which -n 4 10.0.0.1)
expect_eq "$(grep 10.0.0.1 "delim/part-0000$p.ndjson")" $'10.0.0.1 - GET /a\n10.0.0.1 - GET /c' "delimited key"
p=$(ks which -n 4 10.0.0.2)
expect_eq "$(grep 10.0.0.2 "delim/part-0000$p.ndjson")" $'10.0.0.2 - GET /b\r' "delimited key, CRLF"
expect_eq "$(summary_field delim dead_lettered)" 0 "a one-field line has field 1"
ks split --format delimited --delimiter space -k 4 -n 4 -o delim4 -q access.log
expect_eq "$(summary_field delim4 dead_lettered)" 1 "missing field 4 is a bad line"
p=$(ks which -n 4 /b)
expect_contains "$(cat "delim4/part-0000$p.ndjson")" "GET /b" "CR is not part of the last field"
pass "delimited"

printf 'alpha\nbeta\r\nalpha\n' > words.txt
ks split --format line -n 3 -o line -q words.txt
p=$(ks which -n 3 alpha)
expect_eq "$(grep -c alpha "line/part-0000$p.ndjson")" 2 "line format key"
pass "line"

# A byte order mark that starts an input is not part of the first line's key (the line keeps
# it), in every input read, for split, stats and plan; elsewhere it is part of the text.
printf '\xef\xbb\xbfuser1,a\nuser1,b\n' > bom.csv
printf '\xef\xbb\xbfuser1,c\n' > bom2.csv
ks split --format delimited --delimiter , -k 1 -n 8 -o bom -q bom.csv bom2.csv
p=$(ks which -n 8 user1)
expect_eq "$(grep -c user1 "bom/part-0000$p.ndjson")" 3 "a byte order mark at each input's start"
cmp -s <(cat bom.csv bom2.csv) <(cat bom/part-*.ndjson) ||
  fail "the lines keep their byte order mark"
printf '\xef\xbb\xbfuser1\nuser1\n\xef\xbb\xbfuser1\n' > bom.txt
expect_contains "$(ks stats --format line -n 8 --json bom.txt)" \
  "{\"partition\": $p, \"events\": 2, \"bytes\": 15}" "stats: the mark starts the input only once"
expect_contains "$(ks plan --format line --from 8 --to 9 bom.txt 2>&1)" \
  "over 3 events and 2 distinct keys" "plan: the mark starts the input only once"
pass "a byte order mark at an input's start"

printf '%s\n' '{"account":{"id":7,"cur":"EUR"},"tags":["x","y"]}' \
  '{"account":{"id":7,"cur":"USD"},"tags":["y"]}' > nested.ndjson
ks split -k account.id -k account.cur -n 8 -o comp -q nested.ndjson
p1=$(ks which -n 8 "$(printf '7\037EUR')")
grep -q EUR "comp/part-0000$p1.ndjson" || fail "composite key with 0x1F separator"
ks split -k /tags/0 -n 8 -o ptr -q nested.ndjson
p=$(ks which -n 8 x)
grep -q EUR "ptr/part-0000$p.ndjson" || fail "JSON Pointer into an array"
ks split -k tags.1 -n 8 -o idx -q nested.ndjson
expect_eq "$(summary_field idx dead_lettered)" 1 "tags.1 missing in the second line"
pass "nested and composite keys"
