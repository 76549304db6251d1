#!/usr/bin/env bash
# A generated 1M-event file (200k in sanitizer builds) split for -j 1, 2, 8 x -n 1, 8, 1024: every output line sits in the
# partition its key hashes to, in input order, nothing lost or duplicated; the summary
# reconciles; -o - reproduces the input byte for byte.
source "$(dirname "$0")/lib.sh"

events=$(scaled 1000000)
"$GEN_EVENTS" --events "$events" --seed 7 > events.ndjson
lines=$(wc -l < events.ndjson)
expect_eq "$lines" "$events" "generated line count"

for threads in 1 2 8; do
  for partitions in 1 8 1024; do
    rm -rf out
    ks split -k user_id -n "$partitions" -j "$threads" -o out -q events.ndjson
    "$VERIFY_SPLIT" --hash murmur2 -n "$partitions" events.ndjson out >/dev/null ||
      fail "verify -j $threads -n $partitions"
    expect_eq "$(summary_field out lines_read)" "$events" "lines_read -j $threads -n $partitions"
    expect_eq "$(summary_field out events_written)" "$events" "events_written"
    expect_eq "$(stat -c %s out/dead-letter.ndjson)" 0 "no dead letters"
    pass "-j $threads -n $partitions"
  done
done

# Every partitioner routes exactly as its formula says.
for hash in crc32 fnv1a md5 xxh3 jump; do
  rm -rf out
  ks split -k user_id -n 12 --hash "$hash" -o out -q events.ndjson
  "$VERIFY_SPLIT" --hash "$hash" -n 12 events.ndjson out >/dev/null || fail "verify --hash $hash"
  pass "--hash $hash"
done

# stdout keeps the global input order exactly.
ks split -k user_id -n 8 -o - -q events.ndjson > ordered.ndjson
expect_same_file ordered.ndjson events.ndjson "-o - output"
cat events.ndjson | ks split -k user_id -n 8 -j 2 -o - -q > ordered-stdin.ndjson
expect_same_file ordered-stdin.ndjson events.ndjson "-o - output from stdin"
pass "-o - is the input order"

# Tiny chunks stress every line boundary.
head -n 20000 events.ndjson > small.ndjson
for chunk in 1 7 100 4KiB; do
  rm -rf out
  ks split -k user_id -n 5 -j 2 --chunk-size "$chunk" -o out -q small.ndjson
  "$VERIFY_SPLIT" --hash murmur2 -n 5 small.ndjson out >/dev/null || fail "--chunk-size $chunk"
done
pass "tiny chunks"
