#!/usr/bin/env bash
# Re-runs librdkafka's own partitioners on the reference keys and compares with the committed
# data/librdkafka_partitions.tsv, so the file the unit tests trust is checked against the library
# installed here. Env: LIBRDKAFKA_REFERENCE (the built generator), TESTS_DIR (the tests/ dir).
set -euo pipefail

tests_dir="${TESTS_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
generator="${LIBRDKAFKA_REFERENCE:-}"

if [[ -z "$generator" ]]; then
  echo "librdkafka_live: SKIP: LIBRDKAFKA_REFERENCE is unset or empty (librdkafka was not found at" \
    "build time; 'make deps' installs it)"
  exit 0
fi
if [[ ! -x "$generator" ]]; then
  echo "librdkafka_live: FAIL: LIBRDKAFKA_REFERENCE=$generator is not an executable" >&2
  exit 1
fi

keys="$tests_dir/data/reference_keys.hex"
expected="$tests_dir/data/librdkafka_partitions.tsv"
work_dir="$(mktemp -d)"
trap 'rm -rf "$work_dir"' EXIT
actual="$work_dir/librdkafka_partitions.tsv"

if ! "$generator" "$keys" >"$actual"; then
  echo "librdkafka_live: FAIL: $generator $keys exited with an error" >&2
  exit 1
fi

if ! cmp -s "$expected" "$actual"; then
  echo "librdkafka_live: FAIL: librdkafka disagrees with $expected" >&2
  echo "columns: hex_key N murmur2 consistent fnv1a; first differing lines (< committed, > live):" >&2
  diff "$expected" "$actual" | head -n 20 >&2 || true
  exit 1
fi
rows="$(wc -l <"$actual")"
echo "librdkafka_live: OK: $rows rows equal $expected"
