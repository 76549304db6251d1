#!/usr/bin/env bash
# `make demo`: partitions the bundled bank transactions by account and shows what came out.
set -euo pipefail
keyshard=${1:-build/src/keyshard}
samples=$(cd "$(dirname "$0")" && pwd)
out=${DEMO_DIR:-${TMPDIR:-/tmp}/keyshard-demo}

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

step keyshard split -k account -n 4 -o "$out" --force samples/transactions.ndjson
"$keyshard" split -k account -n 4 -o "$out" --force "$samples/transactions.ndjson"

step wc -l "$out"/part-*.ndjson
(cd "$out" && wc -l part-*.ndjson)

partition=$("$keyshard" which -n 4 acc-0007)
step keyshard which -n 4 acc-0007
echo "$partition"

step "grep -m 3 acc-0007 $out/part-0000$partition.ndjson    # the hot account, in input order"
grep -m 3 acc-0007 "$out/part-0000$partition.ndjson"

step keyshard split -k account -n 4 -o "$out" --force samples/with-bad-lines.ndjson
"$keyshard" split -k account -n 4 -o "$out" --force "$samples/with-bad-lines.ndjson"
step head -2 "$out/dead-letter.ndjson"
head -2 "$out/dead-letter.ndjson"

step "keyshard split -k user.id -n 2 -o - -q samples/clickstream.ndjson.zst | head -2"
"$keyshard" split -k user.id -n 2 -o - -q "$samples/clickstream.ndjson.zst" | head -2
printf '\nThe outputs are in %s. Try: %s split --help\n' "$out" "$keyshard"
