#!/usr/bin/env bash
# keyshard which agrees with split, reads keys from arguments or stdin, and matches Kafka's
# published murmur2 vector for "foobar" at N = 50 (partition 16, as kafka-python also gives).
source "$(dirname "$0")/lib.sh"

expect_eq "$(ks which -n 50 foobar)" 16 "Kafka's foobar"
expect_eq "$(ks which -n 8 a b c | wc -l)" 3 "one line per key"
expect_eq "$(printf 'a\nb\r\nc\n' | ks which -n 8)" "$(ks which -n 8 a b c)" "stdin keys (CRLF too)"
# A byte order mark before the first key (a file saved on Windows) is not part of it, as split
# reads --format line input; one before a later key is.
printf '\xef\xbb\xbforder-42\r\norder-42\r\n\xef\xbb\xbforder-42\n' > bom-keys.txt
expect_eq "$(ks which -n 100000 < bom-keys.txt | head -n 2 | uniq | wc -l)" 1 \
  "a byte order mark before the first key on stdin"
expect_eq "$(ks which -n 100000 < bom-keys.txt | head -n 1)" "$(ks which -n 100000 order-42)" \
  "the first key, without its byte order mark"
expect_eq "$(ks which -n 100000 < bom-keys.txt | sed -n 3p)" \
  "$(ks which -n 100000 "$(printf '\xef\xbb\xbforder-42')")" "a later key keeps its mark"

printf '{"id":"alpha"}\n{"id":"beta"}\n{"id":"gamma"}\n{"id":"delta"}\n' > in.ndjson
for hash in murmur2 crc32 fnv1a md5 xxh3 jump; do
  rm -rf out
  ks split -k id -n 5 --hash "$hash" -o out -q in.ndjson
  for key in alpha beta gamma delta; do
    p=$(ks which -n 5 --hash "$hash" "$key")
    grep -q "\"$key\"" "out/part-0000$p.ndjson" || fail "$hash: $key not in partition $p"
  done
done
pass "which agrees with split"

# md5: Python's hashlib, independently.
for key in alpha beta 'user 42' ''; do
  want=$(python3 -c 'import hashlib,sys; print(int(hashlib.md5(sys.argv[1].encode()).hexdigest(), 16) % 1000)' "$key")
  expect_eq "$(ks which -n 1000 --hash md5 "$key")" "$want" "md5 of [$key]"
done
pass "md5 matches hashlib"

# A key in brackets (the JSON text of an array key) is one key, as on standard input; so is a
# word that ends with the byte keyshard marks such words with while parsing.
for key in '[1,2]' '[]' '[INFO]' "$(printf 'x\001')" "$(printf '[a]\001')"; do
  expect_eq "$(ks which -n 100 -- "$key")" "$(printf '%s\n' "$key" | ks which -n 100)" \
    "which '$key' as an argument and on stdin"
  expect_eq "$(ks which -n 100 "$key" | wc -l)" 1 "which '$key': one number"
done
expect_eq "$(echo '{"k":[1,2]}' | ks split -q -k k -n 100 -o - --annotate partition)" \
  "{\"k\":[1,2],\"_partition\":$(ks which -n 100 '[1,2]')}" "split and which agree on an array key"
pass "keys in brackets are one key"

# Counts are decimal: a leading zero is not octal, 0x is not hex.
expect_eq "$(ks which -n 010 abc)" "$(ks which -n 10 abc)" "-n 010 is ten partitions"
expect_eq "$(echo '{"k":"abc"}' | ks split -q -k k -n 010 -j 02 -o - --annotate partition)" \
  "{\"k\":\"abc\",\"_partition\":$(ks which -n 10 abc)}" "split -n 010 is ten partitions"
for count in 0x10 08x 0 -3 ''; do
  run_status ks which -n "$count" abc
  expect_eq "$STATUS" 2 "which -n '$count'"
  expect_contains "$ERR" "is not a whole number from 1 to" "which -n '$count' says why"
done
run_status ks stats -k k -n 8 --top 010 /dev/null
expect_eq "$STATUS" 0 "stats --top 010"
pass "counts are decimal"

# Keys fed one at a time on a pipe are answered one at a time, not at the end of the input
# (each answer comes while stdin is still open; the deadline is long, for a slow machine).
python3 - "$KEYSHARD" <<'PY' || fail "which holds its answers back"
import select, subprocess, sys
child = subprocess.Popen([sys.argv[1], "which", "-n", "8"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE)
for key in (b"a", b"b", b"c"):
    child.stdin.write(key + b"\n")
    child.stdin.flush()
    if not select.select([child.stdout], [], [], 60)[0]:
        sys.exit(f"no answer for {key!r} 60 s after it was fed")
    child.stdout.readline()
child.stdin.close()
child.wait()
PY
pass "which answers keys as they come"

# A line on stdin longer than any split reads (1 GiB; a stream without newlines, say) is
# refused, naming its line, after the answers before it; it is not held in memory whole first.
run_status bash -c "{ printf 'a\nb\n'; head -c 1100M /dev/zero; } | '$KEYSHARD' which -n 8"
expect_eq "$STATUS" 1 "a key over 1 GiB: exit status"
expect_contains "$ERR" "keyshard: <stdin>:3: a key longer than 1 GiB, the longest line a split \
reads (--max-line-size)" "a key over 1 GiB: the message"
expect_eq "$OUT" "$(ks which -n 8 a b)" "a key over 1 GiB: the answers before it"
pass "which refuses a key longer than any split reads"
