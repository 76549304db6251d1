#!/usr/bin/env bash
# --salt KEY:K spreads one hot key over K sub-keys: evenly, deterministically (the same on every
# run, thread count and chunking), and without moving or reordering any other key.
source "$(dirname "$0")/lib.sh"

"$GEN_EVENTS" --events 200000 --seed 4 > events.ndjson
ks split -k user_id -n 8 -o plain -q events.ndjson
ks split -k user_id -n 8 -j 2 --salt user_celebrity:8 --annotate salt -o salted -q events.ndjson

python3 - plain salted "$KEYSHARD" <<'PY'
import collections, json, subprocess, sys
plain, salted, keyshard = sys.argv[1:4]
def read(folder):
    return {p: open(f"{folder}/part-{p:05d}.ndjson", "rb").read().splitlines() for p in range(8)}
before, after = read(plain), read(salted)
sub_keys = collections.Counter()
expected_partition = [int(x) for x in subprocess.run(
    [keyshard, "which", "-n", "8"], input="".join(f"user_celebrity\x1e{i}\n" for i in range(8)).encode(),
    capture_output=True, check=True).stdout.split()]
for p in range(8):
    others_before = [l for l in before[p] if b'"user_celebrity"' not in l]
    others_after = [l for l in after[p] if b'"user_celebrity"' not in l]
    assert others_before == others_after, f"partition {p}: other keys moved or reordered"
    for line in after[p]:
        if b'"user_celebrity"' in line:
            event = json.loads(line)
            sub_keys[event["_salt"]] += 1
            assert expected_partition[event["_salt"]] == p, (event["_salt"], p)
        else:
            assert b'"_salt"' not in line
total = sum(sub_keys.values())
assert total == sum(l.count(b'"user_celebrity"') for f in before.values() for l in f), total
assert sorted(sub_keys) == list(range(8)), sub_keys
for index, count in sub_keys.items():
    assert abs(count - total / 8) <= 0.05 * total / 8, (index, count, total)
print(f"celebrity: {total} events over 8 sub-keys: {sorted(sub_keys.values())}")
PY
pass "spread evenly; other keys unchanged"

# The same placement on every run, whatever the threads or the chunking.
ks split -k user_id -n 8 -j 1 --chunk-size 7KiB --salt user_celebrity:8 --annotate salt -o again -q events.ndjson
for f in salted/part-*.ndjson; do expect_same_file "again/$(basename "$f")" "$f" "repeatable salting"; done
cat events.ndjson | ks split -k user_id -n 8 --salt user_celebrity:8 --annotate salt -o piped -q
for f in salted/part-*.ndjson; do expect_same_file "piped/$(basename "$f")" "$f" "salting from stdin"; done
pass "deterministic"

# --salt-by: one session's events share a sub-key (and keep their order).
ks split -k user_id -n 8 --salt user_celebrity:4 --salt-by session --annotate salt -o bysession -q events.ndjson
python3 - bysession <<'PY'
import json, sys
seen = {}
for p in range(8):
    for line in open(f"{sys.argv[1]}/part-{p:05d}.ndjson"):
        event = json.loads(line)
        if event["user_id"] == "user_celebrity":
            assert seen.setdefault(event["session"], event["_salt"]) == event["_salt"], event
assert len(set(seen.values())) > 1, seen
PY
run_status ks split -k user_id -n 8 --salt-by session -o by-alone -q events.ndjson
expect_eq "$STATUS" 0 "--salt-by alone"
expect_contains "$ERR" "warning: --salt-by picks the sub-key of a salted key" "--salt-by alone warns"
pass "--salt-by"

# --salt-by on a line over 1 MiB: the same sub-key as on a short line with the same field, read
# without an index many times the line's size (250-390 MB for a 50 MB line before; 72 MB now).
# (A 10 MB line in sanitizer builds.)
python3 -c '
import sys
sys.stdout.write("{\"k\":\"v\",\"p\":[\"s7\"],\"a\":[" + "1," * int(sys.argv[1]) + "1]}\n")
sys.stdout.write("{\"k\":\"v\",\"p\":[\"s7\"]}\n")' "$(scaled 25000000)" > long-salted.ndjson
peak_kib=$(python3 - "$KEYSHARD" <<'PY'
import resource, subprocess, sys
subprocess.run([sys.argv[1], "split", "-q", "-k", "k", "-n", "64", "--salt", "v:8", "--salt-by",
                "p.0", "-o", "long-salted", "long-salted.ndjson"], check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
)
expect_eq "$(cat long-salted/part-*.ndjson | wc -l)" 2 "both lines written"
expect_eq "$(ls long-salted/part-*.ndjson | xargs -n1 sh -c '[ -s "$0" ] && echo "$0"' | wc -l)" 1 \
  "the long line and the short one, with the same --salt-by field, share a partition"
if [ "${SANITIZED:-0}" != 1 ]; then
  [ "$peak_kib" -lt $((160 * 1024)) ] ||
    fail "--salt-by on a 50 MB line: peak RSS $peak_kib KiB, more than 160 MiB"
fi
pass "--salt-by on a long line"

run_status ks split -k user_id -n 8 --salt user_celebrity -o bad events.ndjson
expect_eq "$STATUS" 2 "--salt without :K"
expect_contains "$ERR" "KEY:K" "hint"
ks split -k user_id -n 8 --salt user_celebrity:8 -o summary -q events.ndjson
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["salted"][0]["key"] == "user_celebrity" and s["salted"][0]["events"] > 0, s["salted"]' summary/keyshard-summary.json
pass "summary reports salting"

# A --salt key no event has (misspelt, or quoted): a warning names it; the one that is there
# is salted without a word. With -n 1 there is nothing to spread a key over: refused.
run_status ks split -k user_id -n 8 --salt user_celebrity:8 --salt '"user_celebrity"':4 \
  -o unseen -q events.ndjson
expect_eq "$STATUS" 0 "a --salt key no event has"
expect_eq "$(grep -c 'warning' <<< "$ERR")" 1 "one warning, for the key no event has"
expect_contains "$ERR" 'warning: --salt "user_celebrity":4: no event has the key' \
  "the warning names the key"
run_status ks split -k user_id -n 1 --salt user_celebrity:8 -o one -q events.ndjson
expect_eq "$STATUS" 2 "--salt with -n 1"
expect_contains "$ERR" "with -n 1 there is nothing to spread it over" "--salt with -n 1: why"
pass "--salt: a key no event has is warned of; -n 1 is refused"

# The empty key can be salted (":K"); a key salted twice is refused.
printf '{"k":""}\n%.0s' $(seq 1 40) > empty-keys.ndjson
ks split -q -k k -n 64 --salt :4 --annotate salt,partition -o - empty-keys.ndjson > empty-salted.ndjson
python3 - empty-salted.ndjson "$KEYSHARD" <<'PY' || fail "the empty key salted over its sub-keys"
import json, subprocess, sys
events = [json.loads(line) for line in open(sys.argv[1])]
assert len(events) == 40 and {e["_salt"] for e in events} == {0, 1, 2, 3}, events[:5]
for e in events:  # sub-key i of KEY is KEY, byte 0x1E, i
    want = subprocess.run([sys.argv[2], "which", "-n", "64", "\x1e%d" % e["_salt"]],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert e["_partition"] == int(want), (e, want)
PY
run_status ks split -k k -n 64 --salt a:2 --salt a:3 -o - empty-keys.ndjson
expect_eq "$STATUS" 2 "a key salted twice"
expect_contains "$ERR" 'given twice for the key "a"' "a key salted twice: why"
pass "the empty key can be salted; a key salted twice is refused"

# --hot-keys auto: the heavy keys are found and salted from then on; the skew falls below 1.2,
# and the decisions are the same whatever the threads or the chunking.
# (A prefix of the benchmark data; a fifth of it in sanitizer builds.)
"$GEN_EVENTS" --events "$(scaled 1000000)" --seed 1 > zipf.ndjson
ks split -k user_id -n 8 -o unsalted -q zipf.ndjson
ks split -k user_id -n 8 -j 2 --hot-keys auto -o auto -q zipf.ndjson
ks split -k user_id -n 8 -j 1 --chunk-size 50KiB --hot-keys auto -o auto-again -q zipf.ndjson
for f in auto/part-*.ndjson; do expect_same_file "auto-again/$(basename "$f")" "$f" "repeatable --hot-keys auto"; done
python3 - unsalted auto <<'PY'
import json, sys
before = json.load(open(f"{sys.argv[1]}/keyshard-summary.json"))
after = json.load(open(f"{sys.argv[2]}/keyshard-summary.json"))
assert before["skew"] > 1.2, before["skew"]
assert after["skew"] < 1.2, after["skew"]
salted = {d["key"] for d in after["hot_keys_salted"]}
assert "user_celebrity" in salted, after["hot_keys_salted"]
for top in after["top_keys"]:
    if top["share"] > 0.02 + after["top_keys_error_bound"] / after["events_written"]:
        assert top["key"] in salted, (top, salted)
print(f"skew {before['skew']:.2f} -> {after['skew']:.2f}, salted {sorted(salted)}")
PY
pass "--hot-keys auto"
run_status ks split -k user_id -n 8 --hot-keys sometimes -o bad2 zipf.ndjson
expect_eq "$STATUS" 2 "bad --hot-keys"

# A key's share is of all the events with a key, salted keys' included: a key at 4% throughout
# is not salted under auto:5% once a 50% key is (its share of the rest would be 8%), and is
# under auto:3%. A --salt key counts too.
python3 - > shares.ndjson <<'PY'
n = 0
for block in range(1000):
    for j in range(100):
        n += 1
        key = "A" if j % 2 == 0 else ("B" if j in (1, 27, 53, 79) else f"r{n}")
        print(f'{{"k":"{key}","n":{n}}}')
PY
salted_keys() {
  python3 -c 'import json, sys
print(" ".join(d["key"] for d in json.load(open(sys.argv[1]))["hot_keys_salted"]))' \
    "$1/keyshard-summary.json"
}
ks split -q -k k -n 8 --hot-keys auto:5% -o shares5 shares.ndjson
expect_eq "$(salted_keys shares5)" "A" "auto:5%: only the 50% key"
ks split -q -k k -n 8 --hot-keys auto:3% -o shares3 shares.ndjson
expect_eq "$(salted_keys shares3)" "A B" "auto:3%: the 50% key and the 4% one"
ks split -q -k k -n 8 --salt A:4 --hot-keys auto:5% -o shares-salt shares.ndjson
expect_eq "$(salted_keys shares-salt)" "" "auto:5% beside --salt A:4: no key"
pass "--hot-keys shares are of all the events"

# A key a little over SHARE is found: B at 2.3% throughout, under the default 2%.
python3 - > near.ndjson <<'PY'
import random
random.seed(5)
for i in range(200000):
    print('{"k":"%s","s":"v%d"}' % ("B" if random.random() < 0.023 else f"u{i}", i % 30))
PY
ks split -q -k k -n 8 --hot-keys auto -o near near.ndjson
expect_eq "$(salted_keys near)" "B" "a key at 2.3% under auto (2%)"
# A SHARE so small that nearly every key would pass it is refused.
run_status ks split -q -k k -n 8 --hot-keys auto:0.0000001 -o tiny near.ndjson
expect_eq "$STATUS" 2 "auto:0.0000001"
expect_contains "$ERR" "SHARE from 0.01%" "the range of SHARE"
# --salt-by applies to the keys --hot-keys salts as to the --salt ones: each value of the
# field stays in one sub-key. A --salt key is salted as named only, never a second time.
# (near.ndjson with "k":"A" for one key in four: A is named, B is found.)
sed 's/"k":"u\([0-9]*[05]\)"/"k":"A"/' near.ndjson > named.ndjson
ks split -q -k k -n 16 --salt A:4 --salt-by s --hot-keys auto --annotate partition,salt \
  -o - named.ndjson > named.out
python3 - named.out <<'PY' || fail "--salt-by with --salt and --hot-keys"
import collections, json, sys
places = collections.defaultdict(set)
for line in open(sys.argv[1]):
    event = json.loads(line)
    if "_salt" in event:
        places[event["k"], event["s"]].add((event["_partition"], event["_salt"]))
assert {k for k, s in places} == {"A", "B"}, sorted({k for k, s in places})
assert max(s for (k, _), v in places.items() if k == "A" for p, s in v) < 4, "A over 4 sub-keys"
spread = {key: v for key, v in places.items() if len(v) > 1}
assert not spread, f"values spread over sub-keys: {sorted(spread)[:3]}"
PY
pass "--hot-keys finds keys just over SHARE; --salt-by applies to them; --salt keys once"

# The summary names where the salting started: the first salted event, which may be in the next
# input when the line that crossed SHARE ends one (X crosses 5% on x1's last line).
python3 - <<'PY'
with open("x1.ndjson", "w") as f:
    for i in range(9999):
        f.write('{"user_id":"%s"}\n' % ("X" if i % 15 == 0 else "u%d" % i))
    f.write('{"user_id":"X"}\n')
with open("x2.ndjson", "w") as f:
    for i in range(100):
        f.write('{"user_id":"%s"}\n' % ("X" if i % 2 == 0 else "v%d" % i))
PY
run_status ks split -k user_id -n 4 --hot-keys auto:5% -o crossing x1.ndjson x2.ndjson
expect_contains "$ERR" 'hot key "X" salted over 4 sub-keys from x2.ndjson byte 0: 50 events' \
  "the first salted event's input and offset"
python3 - crossing/keyshard-summary.json <<'PY' || fail "the summary file's hot key decision"
import json, sys
[decision] = json.load(open(sys.argv[1]))["hot_keys_salted"]
assert (decision["input"], decision["offset"], decision["events"]) == ("x2.ndjson", 0, 50), decision
PY
# ... and in the middle of an input, the line after the crossing one.
head -c 20000000 zipf.ndjson | head -n -1 > zipf-head.ndjson
ks split -q -k user_id -n 8 --hot-keys auto -o offsets zipf-head.ndjson
# (-o -: the events in input order, each with its sub-key as _salt when salted.)
ks split -q -k user_id -n 8 --hot-keys auto --annotate salt -o - zipf-head.ndjson \
  > annotated.ndjson
python3 - offsets/keyshard-summary.json annotated.ndjson zipf-head.ndjson <<'PY' || \
  fail "the offset of the first salted event"
import json, sys
decisions = json.load(open(sys.argv[1]))["hot_keys_salted"]
assert decisions, "no key salted in the first 20 MB"
first = {}  # key -> byte offset in the input of its first salted event
offset = 0
with open(sys.argv[2]) as annotated, open(sys.argv[3], "rb") as source:
    for line, raw in zip(annotated, source):
        event = json.loads(line)
        assert event["user_id"] == json.loads(raw)["user_id"], offset
        if "_salt" in event:
            first.setdefault(event["user_id"], offset)
        offset += len(raw)
assert {d["key"]: d["offset"] for d in decisions} == first, (decisions, first)
PY
pass "the summary names the first salted event"

# --hot-keys on a key whose crossing event starts an input with a byte order mark: the key it
# salts is the key without the mark, as routed, so the run partitions as without the mark.
python3 - <<'PY'
lines = [f"{'hot' if i % 16 == 0 else f'k{i}'},{i}" for i in range(9999)]
open("before-bom.csv", "w").write("\n".join(lines) + "\n")
rest = "\n".join(f"{'hot' if i % 4 == 0 else f'm{i}'},{i}" for i in range(2000)) + "\n"
open("bom-first.csv", "w", encoding="utf-8").write("\ufeffhot,first\n" + rest)
open("plain-first.csv", "w").write("hot,first\n" + rest)
PY
for first in bom-first plain-first; do
  run_status ks split -k 1 --format delimited --delimiter , -n 4 --hot-keys auto:5% \
    -o "hot-$first" before-bom.csv "$first.csv"
  expect_eq "$STATUS" 0 "--hot-keys over $first.csv"
  expect_contains "$ERR" 'hot key "hot" salted over 4 sub-keys' "the key salted ($first)"
done
for p in 0 1 2 3; do
  expect_eq "$(wc -l < "hot-bom-first/part-0000$p.ndjson")" \
    "$(wc -l < "hot-plain-first/part-0000$p.ndjson")" "partition $p with and without the mark"
done
pass "--hot-keys salts a key that crossed at an input's byte order mark by its key"

# --hot-keys keeps each key it salts whole, so it salts at most 1,024 keys, of at most 4 MiB in
# all: memory, checkpoints and the summary stay bounded however many keys turn hot. Here 1,100
# keys turn hot (each over 0.01% of the events at its second one); then two keys of 3 MiB do,
# of which the second does not fit (that run salts no more than 1,024 either way).
python3 - <<'PY'
with open("many-hot.ndjson", "w") as f:
    for i in range(10000):
        f.write('{"k":"w%d"}\n' % i)
    for i in range(1100):
        f.write('{"k":"h%d"}\n' % i * 3)
with open("long-hot.ndjson", "w") as f:
    for i in range(10000):
        f.write('{"k":"w%d"}\n' % i)
    for c in "ab":
        f.write(('{"k":"%s"}\n' % (c * (3 << 20))) * 3)
PY
run_status ks split -k k -n 4 --hot-keys auto:0.01% -o many-hot many-hot.ndjson
expect_eq "$STATUS" 0 "many hot keys: the run succeeds"
expect_contains "$ERR" "and 1,014 more hot keys salted (keyshard-summary.json lists each)" \
  "the summary shows the first 10"
expect_contains "$ERR" "(at most 1,024 keys are salted by --hot-keys: keys found hot after those \
were not)" "the summary says the limit was reached"
python3 - many-hot/keyshard-summary.json <<'PY' || fail "the summary file's hot keys"
import json, sys
decisions = json.load(open(sys.argv[1]))["hot_keys_salted"]
assert len(decisions) == 1024, len(decisions)
assert [d["key"] for d in decisions] == ["h%d" % i for i in range(1024)], decisions[:3]
assert all(d["events"] == 1 for d in decisions), decisions[:3]
PY
expect_eq "$(cat many-hot/part-*.ndjson | wc -l)" 13300 "every event written"
run_status ks split -k k -n 4 --hot-keys auto:0.01% -o long-hot long-hot.ndjson
python3 - long-hot/keyshard-summary.json <<'PY' || fail "a key past 4 MiB in all"
import json, sys
decisions = json.load(open(sys.argv[1]))["hot_keys_salted"]
assert [(d["key"][:2], d["truncated"]) for d in decisions] == [("aa", True)], decisions
PY
[[ "$ERR" != *"at most 1,024"* ]] || fail "the count limit is not named when it was not reached"
pass "--hot-keys salts at most 1,024 keys, of 4 MiB in all"
