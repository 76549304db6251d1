# Shared helpers for the end-to-end tests: each test script sources this, runs the real binary
# in a fresh temporary directory, and fails with a message showing expected and actual values.
# Environment (set by meson): KEYSHARD, GEN_EVENTS, VERIFY_SPLIT, TESTS_DIR, SOURCE_DIR.
set -euo pipefail
# The tools the tests run (python3, zstd, awk...) are the Debian packages `make deps` installs,
# not whatever shim comes first on PATH (pyenv's python3 takes ten times as long to start).
PATH="/usr/bin:/bin:$PATH"
# meson sets MALLOC_PERTURB_ for every test: glibc then fills each block it hands out with junk,
# which shakes out reads of memory keyshard never wrote. GNU sort, given a file, allocates a
# buffer sized from the machine's memory, which that fills byte by byte: a sort of a 100 MiB
# file took 25 s and 6.3 GiB instead of 0.7 s and 124 MiB. sort runs without it.
sort() { MALLOC_PERTURB_= command sort "$@"; }

: "${KEYSHARD:?set KEYSHARD to the keyshard binary}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/keyshard-test.XXXXXX")
cleanup() {
  local status=$?
  if [ "$status" -ne 0 ] || [ "${KEEP_WORK:-}" = 1 ]; then
    echo "work directory kept: $WORK" >&2
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT
cd "$WORK"

# nap SECONDS: a sleep that starts no process: read waits out its timeout on a FIFO that nothing
# writes to. (wait_until polls with it. Its /bin/sleep every 10 ms came to about 6 CPU-seconds
# of the plain suite, on a VM where each new process costs milliseconds.)
mkfifo "$WORK/.nap"
nap() { read -r -t "$1" <> "$WORK/.nap" || true; }

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# expect_eq ACTUAL EXPECTED WHAT
expect_eq() {
  [ "$1" == "$2" ] || fail "$3"$'\n'"  expected: $2"$'\n'"  actual:   $1"
}

# expect_contains TEXT NEEDLE WHAT
expect_contains() {
  [[ "$1" == *"$2"* ]] || fail "$3: expected to find [$2] in:"$'\n'"$1"
}

# expect_same_file ACTUAL EXPECTED WHAT
expect_same_file() {
  cmp -s "$1" "$2" || fail "$3: $1 differs from $2"$'\n'"$(diff <(head -c 2000 "$2") <(head -c 2000 "$1") | head -20)"
}

# run_status CMD...: runs CMD, stores stdout in $OUT, stderr in $ERR, exit status in $STATUS.
run_status() {
  set +e
  "$@" >"$WORK/.stdout" 2>"$WORK/.stderr"
  STATUS=$?
  set -e
  OUT=$(cat "$WORK/.stdout")
  ERR=$(cat "$WORK/.stderr")
}

ks() { "$KEYSHARD" "$@"; }

# scaled N: N, or a fifth of it in a sanitizer build (SANITIZED=1), where everything runs several
# times slower; the behaviour checked is the same.
scaled() {
  if [ "${SANITIZED:-0}" = 1 ]; then echo $(($1 / 5)); else echo "$1"; fi
}

# summary_field DIR FIELD: a top-level number from DIR/keyshard-summary.json.
summary_field() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' \
    "$1/keyshard-summary.json" "$2"
}

pass() { echo "ok: $*"; }

# resign FILE: gives the checkpoint FILE, edited by a test, a valid checksum again (XXH3-64 of
# the bytes before it).
resign() {
  python3 - "$1" <<'PY'
import ctypes, sys
xxh = ctypes.CDLL("libxxhash.so.0")
xxh.XXH3_64bits.restype = ctypes.c_uint64
xxh.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
text = open(sys.argv[1], "rb").read()
body = text[:text.index(b'  "checksum": "')]
sign = b'  "checksum": "%016x"\n}\n' % xxh.XXH3_64bits(body, len(body))
open(sys.argv[1], "wb").write(body + sign)
PY
}

# unfinish DIR: makes the checkpoint of the finished run in DIR that of a run cut short, as a
# crash after its last checkpoint would leave it.
unfinish() {
  sed -i 's/"complete": true/"complete": false/' "$1/.keyshard/checkpoint.json"
  resign "$1/.keyshard/checkpoint.json"
}

# wait_until CMD...: runs CMD every 10 ms until it succeeds (status 0), for up to 120 s; the
# status is 1 if it never did. For a state a background run reaches at a pace the machine sets
# (a sanitizer build on a busy machine can take many times as long), never a fixed sleep.
wait_until() {
  local deadline=$((SECONDS + 120))
  until "$@" 2> /dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    nap 0.01
  done
}
