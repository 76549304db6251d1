#!/usr/bin/env bash
# Crash test: SIGKILL a split at random moments, resume (and kill the resume too, sometimes),
# and prove the finished outputs byte-identical (sha256) to an uninterrupted run, for plain and
# zstd outputs under --commit sync and async. The summary must agree too, except for the times
# and the heaviest-keys estimates, which must hold against the whole run's true counts. Then ^C
# and SIGTERM: exit 130/143 with a checkpoint, and resume completes. The fast variant runs in
# `make test`; CRASH_SEEDS=20 CRASH_MIB=120 (the `slow` suite) is the full one.
source "$(dirname "$0")/lib.sh"

seeds=${CRASH_SEEDS:-3}
mib=$(scaled "${CRASH_MIB:-40}")
every=$((mib / 10 > 1 ? mib / 10 : 1))MiB

# Events with a bad line every 5,000 lines, so the dead-letter file is part of every cut.
"$GEN_EVENTS" --bytes "${mib}MiB" --seed 11 |
  awk 'NR % 5000 == 0 { print "{\"user_id\": broken" } { print }' > events.ndjson

# sha256 of every output, and of the summary without times and estimates.
fingerprint() {
  (cd "$1" && sha256sum part-* dead-letter.ndjson)
  python3 - "$1/keyshard-summary.json" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
for key in ("elapsed_seconds", "mb_per_second", "top_keys", "top_keys_error_bound"):
    summary.pop(key, None)
print(json.dumps(summary, sort_keys=True))
PY
}

# The true number of events of each key, to check the heaviest-keys estimates against.
python3 - events.ndjson > truth.json <<'PY'
import collections, json, sys
counts = collections.Counter()
for line in open(sys.argv[1], "rb"):
    try:
        counts[json.loads(line)["user_id"]] += 1
    except ValueError:
        pass  # the bad lines
json.dump({"total": sum(counts.values()), "counts": counts}, sys.stdout)
PY

# check_top_keys DIR WHAT: the heaviest keys in DIR's summary cover the whole run, resumed or
# not: their bound is at most that of every event (N/257), each count is at most that far below
# the true count and never above it, and the heaviest key is listed.
check_top_keys() {
  python3 - "$1/keyshard-summary.json" truth.json <<'PY' || fail "heaviest keys: $2"
import json, sys
summary, truth = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
bound = truth["total"] // 257
problems = []
if summary["top_keys_error_bound"] > bound:
    problems.append(f"bound {summary['top_keys_error_bound']}, want at most {bound}")
bound = summary["top_keys_error_bound"]
for entry in summary["top_keys"]:
    true = truth["counts"].get(entry["key"], 0)
    if not true - bound <= entry["events"] <= true:
        problems.append(f"{entry['key']}: {entry['events']} events, truly {true}")
heaviest = max(truth["counts"], key=truth["counts"].get)
if heaviest not in [entry["key"] for entry in summary["top_keys"]]:
    problems.append(f"the heaviest key, {heaviest}, is not listed")
print("\n".join(problems))
sys.exit(1 if problems else 0)
PY
}

complete() {
  [ -f "$1/.keyshard/checkpoint.json" ] && grep -q '"complete": true' "$1/.keyshard/checkpoint.json"
}

now_ms() { date +%s%3N; }

# Runs "$@" in the background and SIGKILLs it after $1 milliseconds (unless it ended first).
kill_after() {
  local delay_ms=$1
  shift
  "$@" >/dev/null 2>>"$WORK/runs.log" &
  local pid=$!
  sleep "$(awk -v ms="$delay_ms" 'BEGIN { printf "%.3f", ms / 1000 }')"
  if kill -KILL "$pid" 2>/dev/null; then landed=$((landed + 1)); fi
  wait "$pid" 2>/dev/null || true
}

for compress in none zstd:1; do
  for commit in sync async; do
    options=(-k user_id -n 16 -j 2 --checkpoint-every "$every" --commit "$commit" -q)
    [ "$compress" = none ] || options+=(--compress "$compress")
    rm -rf reference
    started=$(now_ms)
    ks split "${options[@]}" -o reference events.ndjson
    took=$(($(now_ms) - started))
    fingerprint reference > reference.sha
    ks verify -q reference
    check_top_keys reference "uninterrupted run ($compress, --commit $commit)"
    landed=0
    for seed in $(seq 1 "$seeds"); do
      RANDOM=$((seed * 7919))
      out="crash-$compress-$commit-$seed"
      rm -rf "$out"
      kills=0
      kill_after $((took * (RANDOM % 100) / 100)) "$KEYSHARD" split "${options[@]}" -o "$out" events.ndjson
      kills=$((kills + 1))
      # Killed before its first checkpoint reached the disk: nothing counts; start over.
      if [ ! -f "$out/.keyshard/checkpoint.json" ]; then
        ks split "${options[@]}" --force -o "$out" events.ndjson
      fi
      while ! complete "$out"; do
        if [ $((RANDOM % 3)) -eq 0 ] && [ "$kills" -lt 6 ]; then
          kill_after $((took * (RANDOM % 100) / 100)) "$KEYSHARD" resume -q "$out"
          kills=$((kills + 1))
        else
          ks resume -q "$out"
        fi
      done
      fingerprint "$out" > got.sha
      expect_same_file got.sha reference.sha "outputs after $kills kill(s) ($compress, --commit $commit, seed $seed)"
      ks verify -q "$out"
      check_top_keys "$out" "after $kills kill(s) ($compress, --commit $commit, seed $seed)"
      rm -rf "$out"
    done
    [ "$landed" -gt 0 ] || fail "no SIGKILL landed while keyshard was running"
    pass "SIGKILL + resume ($compress, --commit $commit): $seeds seeds, $landed kills mid-run, byte-identical"
  done
done

# ^C and SIGTERM: a checkpoint, the message, 130 and 143; resume finishes the job.
for signal in INT TERM; do
  rm -rf "sig-$signal"
  set +e
  "$KEYSHARD" split -k user_id -n 16 -j 2 --compress zstd:1 -o "sig-$signal" events.ndjson \
    2> "sig-$signal.err" &
  pid=$!
  # Once the first checkpoint is on disk, the signal handlers are in place.
  wait_until test -f "sig-$signal/.keyshard/checkpoint.json" ||
    fail "sig-$signal: no start checkpoint"
  sleep 0.02
  kill -"$signal" "$pid" 2>/dev/null || true
  wait "$pid"
  status=$?
  set -e
  if [ "$status" -eq 0 ]; then
    continue  # finished before the signal arrived (a very fast machine): nothing to check
  fi
  expected=$([ "$signal" = INT ] && echo 130 || echo 143)
  expect_eq "$status" "$expected" "exit status after SIG$signal"
  expect_contains "$(cat "sig-$signal.err")" \
    "keyshard: interrupted; resume with: keyshard resume sig-$signal" "SIG$signal message"
  ks verify -q "sig-$signal"
  ks resume -q "sig-$signal"
  complete "sig-$signal" || fail "resume after SIG$signal did not complete the run"
  check_top_keys "sig-$signal" "resume after SIG$signal"
  ks split -k user_id -n 16 -j 1 --compress zstd:1 -q -o "whole-$signal" events.ndjson
  for f in whole-$signal/part-*.zst; do
    zstd -q -dc "$f" > a.ndjson
    zstd -q -dc "sig-$signal/$(basename "$f")" > b.ndjson
    expect_same_file b.ndjson a.ndjson "resume after SIG$signal: $(basename "$f") decompressed"
  done
  pass "SIG$signal: exit $expected, checkpoint, resume completes"
done

# Out of resources: a worker thread that cannot start (a small `ulimit -v`) ends the run with a
# message and exit status 1, not an abort, and the run is started again. (Not in a sanitizer
# build: its shadow memory needs more address space than any such limit leaves.)
if [ "${SANITIZED:-0}" != 1 ]; then
  rm -rf limited reference-8
  run_status bash -c "ulimit -v 20000 && exec \"\$0\" split -q -k user_id -n 8 -j 2 -o limited \
events.ndjson" "$KEYSHARD"
  expect_eq "$STATUS" 1 "a thread that cannot start: exit status"
  # (a thread that cannot start, or memory, whichever runs out first)
  grep -qE "^keyshard: (out of |cannot start )" <<< "$ERR" ||
    fail "a thread that cannot start: why: $ERR"
  ks split -q -k user_id -n 8 -j 2 -o limited events.ndjson
  ks split -q -k user_id -n 8 -j 1 -o reference-8 events.ndjson
  for f in reference-8/part-*; do
    expect_same_file "limited/$(basename "$f")" "$f" "started again: $(basename "$f")"
  done
  pass "a thread that cannot start: exit 1 with a message; the run is started again"

  # Memory that runs out part way (a 60 MB line under a 100 MB limit): exit 1, saying so and
  # that resume continues the run; resume, without the limit, completes it exactly.
  rm -rf oom oom-reference
  { head -n 20000 events.ndjson
    python3 -c 'print("{\"user_id\":\"long\",\"pad\":\"" + "x" * 60_000_000 + "\"}")'
    tail -n 2000 events.ndjson; } > long-line.ndjson
  run_status bash -c "ulimit -v 100000 && exec \"\$0\" split -q -k user_id -n 8 -j 2 \
--checkpoint-every 256KiB -o oom long-line.ndjson" "$KEYSHARD"
  expect_eq "$STATUS" 1 "memory run out: exit status"
  expect_contains "$ERR" "keyshard: out of memory (is a limit such as ulimit -v lower" \
    "memory run out: why"
  expect_contains "$ERR" "once that is fixed, \`keyshard resume oom\` continues the run" \
    "memory run out: how to go on"
  ks resume -q oom
  ks split -q -k user_id -n 8 -j 2 -o oom-reference long-line.ndjson
  for f in oom-reference/part-* oom-reference/dead-letter.ndjson; do
    expect_same_file "oom/$(basename "$f")" "$f" "memory run out, resumed: $(basename "$f")"
  done
  rm -f long-line.ndjson
  pass "memory run out: exit 1, and resume completes the run"

  # With --exec, a thread that cannot start (each takes a 1 GB stack here, under a 2.2 GB
  # limit) ends the run too, rather than leave it waiting for ever on children whose worker
  # never started, which would hold their input open.
  head -n 20000 events.ndjson > some.ndjson
  run_status timeout -k 5 60 bash -c "ulimit -s 1000000 && ulimit -v 2200000 && \
exec \"\$0\" split -q -k user_id -n 4 -j 4 --exec cat -o - some.ndjson" "$KEYSHARD"
  expect_eq "$STATUS" 1 "--exec, a thread that cannot start: exit status (124: it hung)"
  # (a thread that cannot start, or memory, whichever runs out first)
  grep -qE "^keyshard: (out of |cannot start )" <<< "$ERR" ||
    fail "--exec, a thread that cannot start: why: $ERR"
  pass "--exec: a thread that cannot start ends the run"
fi

# Threads that cannot start (ulimit -u: kept for an unprivileged user only, so the run is one
# as nobody): a worker that cannot start names -j, and the run leaves nothing behind.
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
  # (The binary is copied where nobody can run it: the build may sit in a private directory.)
  shared=$(mktemp -d) && chmod 755 "$shared" && mkdir -m 777 "$shared/work"
  cp "$KEYSHARD" "$shared/keyshard" && chmod 755 "$shared/keyshard"
  head -n 20000 events.ndjson > "$shared/work/in.ndjson"
  chmod 644 "$shared/work/in.ndjson"
  run_status setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c \
    "cd \"\$1\" && ulimit -u 8 && exec \"\$0\" split -q -k user_id -n 4 -j 64 -o few in.ndjson" \
    "$shared/keyshard" "$shared/work"
  expect_eq "$STATUS" 1 "threads that cannot start: exit status"
  expect_contains "$ERR" "cannot start worker thread" "threads that cannot start: which"
  expect_contains "$ERR" "use a smaller -j, or raise the limit" \
    "threads that cannot start: what to do"
  expect_contains "$ERR" "run it again" "threads that cannot start: how to go on"
  [ ! -e "$shared/work/few" ] || fail "threads that cannot start: DIR left behind"
  rm -rf "$shared"
  pass "threads that cannot start: exit 1 naming -j; nothing left behind"
fi
