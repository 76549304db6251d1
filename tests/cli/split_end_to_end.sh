#!/usr/bin/env bash
# A generated 1M-event file (200k in sanitizer builds) split for -j 1, 2, 8 x -n 1, 8, 1024:
# every output line sits in the partition its key hashes to, in input order, nothing lost or
# duplicated; the summary reconciles; -o - reproduces the input byte for byte. The workers run
# below the reader's priority.
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

# The reader keeps keyshard's own priority; the workers run 10 nice levels below it (19 at
# most), so that they never keep the one serial stage from a core. nice(1) moves them all.
thread_nice() {  # thread_nice STAT_FILE: the nice level in /proc/PID/task/TID/stat
  local stat
  stat=$(cat "$1")
  # The fields after the command name, which may hold spaces, start with the 3rd: nice is 19th.
  awk '{ print $17 }' <<<"${stat##*) }"
}
own_nice=$(nice)  # the tests may themselves run niced
for base in 0 4 12; do
  reader_nice=$((own_nice + base > 19 ? 19 : own_nice + base))
  rm -rf prio prio.fifo && mkfifo prio.fifo
  nice -n "$base" "$KEYSHARD" split -k user_id -n 4 -j 2 -q -o prio prio.fifo &
  pid=$!
  exec 3>prio.fifo
  head -n 100 events.ndjson >&3
  worker_nice=$((reader_nice + 10 > 19 ? 19 : reader_nice + 10))
  # A worker names itself, then lowers its priority: wait (up to 60 s, for a slow machine) until
  # both are named and at their level, then check what was seen.
  workers=()
  deadline=$((SECONDS + 60))
  while :; do
    workers=($(grep -l '^ks-worker-' /proc/"$pid"/task/*/comm 2>/dev/null || true))
    worker_levels=()
    for comm in "${workers[@]}"; do
      worker_levels+=("$(thread_nice "${comm%/comm}/stat" 2>/dev/null || true)")
    done
    if [ "${#workers[@]}" -eq 2 ] && [ "${worker_levels[*]}" = "$worker_nice $worker_nice" ]; then
      break
    fi
    [ "$SECONDS" -lt "$deadline" ] || break
    sleep 0.05
  done
  expect_eq "${#workers[@]}" 2 "worker threads named ks-worker-N (nice $base)"
  expect_eq "$(thread_nice /proc/"$pid"/task/"$pid"/stat)" "$reader_nice" "the reader's nice level"
  for level in "${worker_levels[@]}"; do
    expect_eq "$level" "$worker_nice" "a worker's nice level (keyshard at nice $base)"
  done
  exec 3>&-
  wait "$pid" || fail "the run at nice $base"
  expect_eq "$(summary_field prio events_written)" 100 "events written at nice $base"
done
pass "workers run below the reader's priority"
