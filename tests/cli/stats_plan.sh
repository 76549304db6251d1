#!/usr/bin/env bash
# keyshard stats and plan, checked against independent counts made here in Python (keys read
# with the json module; partitions asked of `keyshard which`, whose partitioners are pinned to
# external references in the unit tests).
source "$(dirname "$0")/lib.sh"

"$GEN_EVENTS" --events 60000 --seed 9 --users 5000 > events.ndjson
printf 'not json\n{"no_key":1}\n' >> events.ndjson

# stats: the same loads as a real split, nothing written, the heaviest keys within the bound.
ks split -k user_id -n 8 -o out -q events.ndjson
ks stats -k user_id -n 8 --json --top 5 events.ndjson > stats.json
[ "$(ls | grep -v -e '^out$' -e '^events.ndjson$' -e '^stats.json$' | wc -l)" = 0 ] ||
  fail "stats wrote files: $(ls)"
python3 - stats.json out events.ndjson "$KEYSHARD" <<'PY'
import collections, json, subprocess, sys
stats = json.load(open(sys.argv[1]))
out, events, keyshard = sys.argv[2], sys.argv[3], sys.argv[4]
for p in range(8):
    lines = open(f"{out}/part-{p:05d}.ndjson", "rb").read().count(b"\n")
    assert stats["per_partition"][p]["events"] == lines, (p, stats["per_partition"][p], lines)
assert stats["bad_lines"]["invalid_json"] == 1 and stats["bad_lines"]["missing_key"] == 1, stats
counts = collections.Counter()
for line in open(events, "rb"):
    try:
        counts[json.loads(line)["user_id"]] += 1
    except (ValueError, KeyError):
        pass
bound = stats["top_keys_error_bound"]
true_top = [k for k, c in counts.most_common() if c > bound]
reported = {t["key"]: t["events"] for t in stats["top_keys"]}
for key in true_top[:5]:
    assert key in reported, (key, counts[key], bound, reported)
for key, count in reported.items():
    assert counts[key] - bound <= count <= counts[key], (key, count, counts[key], bound)
# The what-if, recomputed: each listed key's events spread evenly over 8 sub-keys.
loads = [p["events"] for p in stats["per_partition"]]
def which(keys, n=8):
    text = "".join(k + "\n" for k in keys)
    result = subprocess.run([keyshard, "which", "-n", str(n)], input=text.encode(),
                            capture_output=True, check=True)
    return [int(x) for x in result.stdout.split()]
for t in stats["top_keys"]:
    home = which([t["key"]])[0]
    moved = min(t["events"], loads[home])
    loads[home] -= moved
    for i, p in enumerate(which([t["key"] + "\x1e" + str(i) for i in range(8)])):
        loads[p] += moved // 8 + (1 if i < moved % 8 else 0)
skew = max(loads) * len(loads) / sum(loads)
assert abs(skew - stats["what_if_salted"]["skew"]) < 1e-3, (skew, stats["what_if_salted"])
PY
# The text report gives the same numbers, grouped in thousands as the summary does.
ks stats -k user_id -n 8 --top 5 events.ndjson > stats.txt
python3 - stats.json stats.txt <<'PY'
import json, sys
stats, text = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
def commas(n):
    return f"{n:,}"
head = (f"keyshard stats: {commas(stats['events'])} events from {commas(stats['lines_read'])} "
        f"lines of 1 input; 8 partitions (murmur2)")
assert text.startswith(head + "\n"), (head, text[:200])
for p in stats["per_partition"]:
    row = f"{p['partition']:>9} {commas(p['events']):>12} "
    assert row in text and f" {commas(p['bytes']):>15}\n" in text, (row, p, text)
for t in stats["top_keys"]:
    assert f"% {commas(t['events']):>12} " in text, (t, text)
PY
pass "stats agrees with split and an exact count"

# plan: the moved shares of keys and events, for growth and shrink, for every partitioner.
for sizes in "8 9" "8 12" "12 8" "16 15"; do
  set -- $sizes
  ks plan -k user_id --from "$1" --to "$2" --json events.ndjson > plan.json
  python3 - plan.json events.ndjson "$KEYSHARD" "$1" "$2" <<'PY'
import collections, json, subprocess, sys
plan = json.load(open(sys.argv[1]))
keyshard, before, after = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
counts = collections.Counter()
for line in open(sys.argv[2], "rb"):
    try:
        counts[json.loads(line)["user_id"]] += 1
    except (ValueError, KeyError):
        pass
keys = list(counts)
text = "".join(k + "\n" for k in keys).encode()
def which(hash_name, n):
    result = subprocess.run([keyshard, "which", "--hash", hash_name, "-n", str(n)], input=text,
                            capture_output=True, check=True)
    return [int(x) for x in result.stdout.split()]
assert plan["distinct_keys"] == len(keys) and plan["events"] == sum(counts.values()), plan
for figures in plan["partitioners"]:
    moved = [k for k, a, b in zip(keys, which(figures["hash"], before), which(figures["hash"], after)) if a != b]
    assert figures["keys_moved"] == len(moved), (figures, len(moved))
    assert figures["events_moved"] == sum(counts[k] for k in moved), figures
ideal = abs(after - before) / max(after, before)
assert abs(plan["ideal_share"] - ideal) < 1e-6, plan
jump = next(f for f in plan["partitioners"] if f["hash"] == "jump")
assert abs(jump["keys_moved_share"] - ideal) < 0.03, (jump, ideal)   # jump is near the ideal
if after == before + 1:
    murmur = next(f for f in plan["partitioners"] if f["hash"] == "murmur2")
    assert murmur["keys_moved_share"] > 0.8, murmur                     # modulo moves ~N/(N+1)
PY
  pass "plan $1 -> $2"
done
ks plan -k user_id --from 8 --to 9 events.ndjson > plan.txt
expect_contains "$(cat plan.txt)" "Recommendation: jump moves the fewest keys" \
  "the text report recommends jump"
# Doubling: every partitioner moves about half the keys; none is picked on chance alone. Too
# few keys tell nothing.
ks plan -k user_id --from 8 --to 16 events.ndjson > doubling.txt
expect_contains "$(cat doubling.txt)" "On this input every partitioner moves about as many keys" \
  "doubling: no winner by chance"
expect_contains "$(cat doubling.txt)" "As one count is a multiple of the other, the modulo" \
  "doubling: the caveat fits the case"
expect_contains "$(cat plan.txt)" "move far more than the ideal unless one count" \
  "8 to 9: the caveat"
# Past the 31 bits murmur2 and fnv1a give, they move no key: the text says what was measured,
# not that every modulo partitioner moves far more.
ks plan -k user_id --from 2147483647 --to 2147483646 events.ndjson > top.txt
expect_contains "$(cat top.txt)" "Recommendation: murmur2, fnv1a and jump move the fewest keys" \
  "near 2^31: the 31-bit hashes move none"
expect_contains "$(cat top.txt)" ". crc32, md5 and xxh3 move far more than the ideal here; jump" \
  "near 2^31: the caveat names those that move far more"
head -n 20 events.ndjson > twenty.ndjson
ks plan -k user_id --from 8 --to 12 twenty.ndjson > twenty.txt
expect_contains "$(cat twenty.txt)" "to tell the partitioners apart" "too few keys"
if grep -q Recommendation doubling.txt twenty.txt; then fail "a recommendation by chance"; fi
# plan takes counts past split's -n limit (1,048,576).
ks plan -k user_id --from 8 --to 2000000 twenty.ndjson > large.txt
expect_contains "$(cat large.txt)" "keyshard plan: 8 -> 2,000,000 partitions" "plan --to 2000000"
ks stats -k user_id -n 4096 twenty.ndjson > wide.txt
expect_contains "$(cat wide.txt)" "of 1 input; 4,096 partitions (murmur2)" "stats -n 4096"

# A hot key longer than the 256 bytes the summary keeps: listed (cut), its partition unknown,
# and left out of the what-if, which says so.
python3 - > long-keys.ndjson <<'PY'
import json
long_key = "k" * 300
for i in range(3000):
    print(json.dumps({"id": long_key if i % 3 == 0 else f"user_{i}"}))
PY
ks stats -k id -n 4 --top 3 long-keys.ndjson > long.txt
expect_contains "$(cat long.txt)" "1 key longer than 256 bytes left out" "the what-if says what it left out"
expect_contains "$(cat long.txt)" '         ?  "kkkk' "a cut key's partition is shown as ?"
ks stats -k id -n 4 --top 3 --json long-keys.ndjson > long.json
python3 - long.json <<'PY' || fail "stats --json with a key over 256 bytes"
import json, sys
report = json.load(open(sys.argv[1]))
first = report["top_keys"][0]
assert first["truncated"] and first["partition"] is None, first
assert 1000 - report["top_keys_error_bound"] <= first["events"] <= 1000, first
assert first["key"] == "k" * 256, len(first["key"])
assert report["what_if_salted"]["keys"] == 2 and report["what_if_salted"]["keys_left_out"] == 1
PY
pass "stats: keys over 256 bytes are cut, their partition unknown, left out of the what-if"

# The bound on the counts: stated when there is one (2,001 keys: some counts were cancelled; at
# most 3,000/257), and none while no count was (200 events, or at most 256 keys).
expect_bound() {
  local bound
  bound=$(sed -n 's/.*heaviest keys (each count at most \([0-9]*\) low):.*/\1/p' "$1")
  [ -n "$bound" ] && [ "$bound" -ge 1 ] && [ "$bound" -le 11 ] ||
    fail "$2: no bound from 1 to 11 in: $(grep heaviest "$1")"
}
expect_bound long.txt "stats: the bound"
head -n 200 long-keys.ndjson > few.ndjson
ks stats -k id -n 4 --top 3 few.ndjson > few.txt
expect_contains "$(cat few.txt)" "heaviest keys (counts exact):" "stats: 200 events, exact counts"
ks split -k id -n 4 -o few few.ndjson 2> few-split.txt
expect_contains "$(cat few-split.txt)" "heaviest keys (counts exact):" "split: exact counts"
ks split -k id -n 4 -o many long-keys.ndjson 2> many-split.txt
expect_bound many-split.txt "split: bound"
python3 -c 'for i in range(3000): print("{\"id\":\"k%d\"}" % (i % 256))' > keys256.ndjson
ks split -k id -n 4 -o keys256 keys256.ndjson 2> keys256.txt
expect_contains "$(cat keys256.txt)" "heaviest keys (counts exact):" "split: 256 keys, exact counts"
expect_eq "$(summary_field keys256 top_keys_error_bound)" 0 "256 keys: the bound is 0"
# split's summary lists no key whose count is within the bound (it tells nothing of the key):
# 977 keys taking turns, none stands out; with one key of a third of the events, that one is
# listed, then what any other can have at most (the bound plus the largest count left out).
python3 -c 'for i in range(200000): print("{\"id\":\"k%d\"}" % (i % 977))' > even.ndjson
ks split -k id -n 4 -o - even.ndjson 2> even.txt > /dev/null
python3 - even.txt <<'PY' || fail "split, keys taking turns: none stands out"
import re, sys
text = open(sys.argv[1]).read()
section = text[text.index("  heaviest keys"):].splitlines()
bound = int(re.search(r"each count at most ([\d,]+) low", section[0]).group(1).replace(",", ""))
said = re.fullmatch(r"    none stands out: each key has at most ([\d,]+) events \(0\.\d\d%\)",
                    section[1])
assert said and bound <= int(said.group(1).replace(",", "")) <= 2 * bound, section
assert len(section) == 2, section  # no key listed
PY
python3 -c 'for i in range(300000):
    print("{\"id\":\"%s\"}" % ("hot" if i % 3 == 0 else "k%d" % (i % 977)))' > one-hot.ndjson
ks split -k id -n 4 -o - one-hot.ndjson 2> one-hot.txt > /dev/null
expect_contains "$(sed -n '/heaviest keys/,$p' one-hot.txt | sed -n 2p)" '    "hot"    ' \
  "split, one hot key: listed"
expect_contains "$(sed -n '/heaviest keys/,$p' one-hot.txt | sed -n 3p)" \
  "    any other key has at most " "split, one hot key: then the others' most"
[ "$(sed -n '/heaviest keys/,$p' one-hot.txt | wc -l)" = 3 ] ||
  fail "split, one hot key: keys listed: $(sed -n '/heaviest keys/,$p' one-hot.txt)"

# A report that cannot be written is an error (exit 1, saying why); a reader that stops early
# is not.
ks split -q -k user_id -n 3 -o written events.ndjson
for command in "stats -k user_id -n 3 events.ndjson" "stats --json -k user_id -n 3 events.ndjson" \
  "plan -k user_id --from 3 --to 4 events.ndjson" "verify written" "which -n 3 some-key"; do
  set +e
  ks $command > /dev/full 2> full.err
  STATUS=$?
  set -e
  ERR=$(cat full.err)
  expect_eq "$STATUS" 1 "$command > /dev/full"
  expect_contains "$ERR" "cannot write to standard output: No space left on device" \
    "$command > /dev/full: why"
done
set +o pipefail
ks stats -k user_id -n 3 --top 100 events.ndjson | head -n 1 > /dev/null
expect_eq "${PIPESTATUS[0]}" 0 "stats | head"
set -o pipefail
pass "a report that cannot be written is an error"

# The same count on both sides moves nothing, and the plan says so rather than recommend.
printf '{"user_id":"a"}\n' > single.ndjson
ks plan -k user_id --from 8 --to 8 single.ndjson > same.txt
expect_contains "$(cat same.txt)" "over 1 event and 1 distinct key" "plurals"
expect_contains "$(cat same.txt)" "The count does not change: no key moves." "--from N --to N"
if grep -q Recommendation same.txt; then fail "--from N --to N still recommends a partitioner"; fi
pass "plan with an unchanged count"

# A key's share is of the events that have a key, in stats as in split's summary, also when
# --missing-key partition:P routes the others.
printf '{"k":"a"}\n{"x":1}\n{"k":"b"}\n{"x":2}\n' > keyless.ndjson
ks split -q -k k -n 4 --missing-key partition:3 -o keyless keyless.ndjson
ks stats -k k -n 4 --missing-key partition:3 --json keyless.ndjson > keyless-stats.json
python3 - keyless/keyshard-summary.json keyless-stats.json <<'PY' || fail "shares differ"
import json, sys
split, stats = (json.load(open(path))["top_keys"] for path in sys.argv[1:])
assert [k["share"] for k in split] == [0.5, 0.5], split
assert [k["share"] for k in stats] == [0.5, 0.5], stats
PY
expect_contains "$(ks stats -k k -n 4 --missing-key partition:3 keyless.ndjson)" \
  ' 50.00%            1          0  "a"' "the text report's share"
pass "stats and split agree on a key's share"

# Keys longer than what the report keeps cannot be salted in its what-if; a key seen once reads
# "1 event".
python3 -c "
for i in range(5): print('x' * 300)
for i in range(3): print('y' * 300)
print('z')" > long-keys.txt
ks stats --format line -n 4 --top 2 long-keys.txt > long-keys.report
expect_contains "$(cat long-keys.report)" \
  "what if: these keys are all longer than the 256 bytes this report keeps" "what-if, long keys"
if grep -q "salting these 0" long-keys.report; then fail "what-if salting 0 keys"; fi
printf '{"k":"a"}\n{"k":"a"}\n{"k":"b"}\n' > one-each.ndjson
ks split -k k -n 2 -o one-each one-each.ndjson 2> one-each.err
expect_contains "$(cat one-each.err)" '"b"                               33.33%             1 event' \
  "a key seen once"
if grep -q " 1 events" one-each.err; then fail "1 events"; fi
# A --salt key that is not UTF-8 is shown in base64 in the summary, as the heaviest keys are.
printf 'a\xffb\n%.0s' 1 2 3 4 5 6 > not-utf8.txt
ks split --format line -n 4 --salt "$(printf 'a\xffb'):3" -o not-utf8 not-utf8.txt 2> not-utf8.err
expect_contains "$(cat not-utf8.err)" "salted base64:Yf9i over 3 sub-keys: 6 events" \
  "a --salt key that is not UTF-8"
pass "stats and split reports: long keys, one event, keys not UTF-8"

# ^C during stats or plan (here on a pipe that stays open after 1,000 lines): the reading stops,
# and the report covers the lines read, says so, and matches the report of those lines alone;
# the status is 130. (SIGINT as a run gets it when nothing ignores it: a background job of a
# script is started with it ignored.)
head -n 1000 events.ndjson > first-1000.ndjson
pipe_drained() {  # FIFO: nothing written to it is left unread
  python3 - "$1" <<'PY'
import fcntl, os, struct, sys, termios
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
sys.exit(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0] != 0)
PY
}
interrupt_report() {  # REPORT-FILE COMMAND ARGS...: the command reads a pipe; ^C once it read it
  local report=$1
  shift
  rm -f feed.fifo && mkfifo feed.fifo
  env --default-signal=INT "$KEYSHARD" "$@" < feed.fifo > "$report" 2> "$report.err" &
  local pid=$!
  exec 3> feed.fifo
  cat first-1000.ndjson >&3
  wait_until pipe_drained feed.fifo || fail "$*: the pipe was not read"
  kill -INT "$pid"
  set +e; wait "$pid"; STATUS=$?; set -e
  exec 3>&-
  expect_eq "$STATUS" 130 "$* interrupted: exit status"
  expect_contains "$(cat "$report.err")" \
    "keyshard: interrupted by SIGINT (^C): the report covers the 1,000 lines read before it" \
    "$* interrupted: the message"
}
interrupt_report stats-int.json stats -k user_id -n 8 --json
ks stats -k user_id -n 8 --json first-1000.ndjson > stats-1000.json
interrupt_report plan-int.json plan -k user_id --from 8 --to 9 --json
ks plan -k user_id --from 8 --to 9 --json first-1000.ndjson > plan-1000.json
python3 - stats-int.json stats-1000.json plan-int.json plan-1000.json <<'PY'
import json, sys
stats_int, stats_all, plan_int, plan_all = (json.load(open(path)) for path in sys.argv[1:])
assert stats_int["complete"] is False and stats_all["complete"] is True, stats_int
assert plan_int["complete"] is False and plan_all["complete"] is True, plan_int
for interrupted, whole in ((stats_int, stats_all), (plan_int, plan_all)):
    del interrupted["complete"], whole["complete"]
    interrupted.pop("inputs", None), whole.pop("inputs", None)
    assert interrupted == whole, (interrupted, whole)
assert stats_int["lines_read"] == 1000 and plan_int["lines"] == 1000
PY
interrupt_report stats-int.txt stats -k user_id -n 8
expect_contains "$(sed -n 2p stats-int.txt)" \
  "interrupted by SIGINT (^C): the rest of the input was not read" "the text report says so"
interrupt_report plan-int.txt plan -k user_id --from 8 --to 9
expect_contains "$(sed -n 2p plan-int.txt)" \
  "interrupted by SIGINT (^C): the rest of the input was not read" "the text plan says so"
pass "stats and plan stopped by ^C report on the lines read"

# Past about a million distinct keys, plan measures the keys moved on a sample of them, so that
# its memory stays bounded; the events moved stay exact. 1,300,000 keys, the first 100,000 twice:
# the truth from `keyshard which` at both counts, for every partitioner.
seq 1 1300000 > many-keys.txt
seq 1 100000 >> many-keys.txt
ks plan --format line --from 8 --to 9 --json many-keys.txt > many-keys.json
ks plan --format line --from 8 --to 9 many-keys.txt > many-keys.report
for hash in murmur2 crc32 fnv1a md5 xxh3 jump; do
  ks which --hash "$hash" -n 8 < many-keys.txt > "many-keys.$hash.8"
  ks which --hash "$hash" -n 9 < many-keys.txt > "many-keys.$hash.9"
done
python3 - many-keys.json many-keys.txt <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
keys = open(sys.argv[2]).read().split("\n")[:-1]
distinct = len(set(keys))
assert plan["events"] == len(keys) == 1400000, plan["events"]
assert 0 < plan["key_sample_rate"] < 1, plan["key_sample_rate"]
assert distinct // 4 <= plan["keys_in_sample"] <= 1 << 20, plan["keys_in_sample"]
assert abs(plan["distinct_keys"] - distinct) < 0.03 * distinct, plan["distinct_keys"]
for figures in plan["partitioners"]:
    hash = figures["hash"]
    before = open(f"many-keys.{hash}.8").read().split()
    after = open(f"many-keys.{hash}.9").read().split()
    moved = [b != a for b, a in zip(before, after)]
    assert figures["events_moved"] == sum(moved), (hash, figures["events_moved"], sum(moved))
    keys_moved = len({key for key, m in zip(keys, moved) if m})
    assert abs(figures["keys_moved_share"] - keys_moved / distinct) < 0.01, (hash, figures)
PY
expect_contains "$(sed -n 1p many-keys.report)" "over 1,400,000 events and about " \
  "the text says the key count is estimated (counts with thousands separators)"
python3 - many-keys.json many-keys.report <<'PY' || fail "plan's text gives the sample's figures"
import json, sys
plan = json.load(open(sys.argv[1]))
line = open(sys.argv[2]).read().split("\n")[1]
expected = (f"keys moved: measured on a sample of {plan['keys_in_sample']:,} of them "
            f"(1 in {round(1 / plan['key_sample_rate']):,}, by hash); events moved: exact")
assert line == expected, (line, expected)
PY
# Up to the sample's capacity, every key is counted.
ks plan -k user_id --from 8 --to 9 --json events.ndjson > few-keys.json
python3 -c "
import json, sys
plan = json.load(open('few-keys.json'))
assert plan['key_sample_rate'] == 1 and plan['keys_in_sample'] == plan['distinct_keys'], plan"
pass "plan past a million distinct keys: a sample of the keys, the events exact"
