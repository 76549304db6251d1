#!/usr/bin/env bash
# run.sh BUILD [SECONDS]: runs each libFuzzer target of BUILD (set up with -Dfuzz=true) for
# SECONDS (60 by default), as many at once as there are cores (FUZZ_JOBS), starting from its
# saved inputs in tests/fuzz/corpus. New inputs that reach new code are kept in
# BUILD/fuzz-corpus; an input that breaks a target is saved as BUILD/fuzz-TARGET-crash-* (copy it
# into tests/fuzz/corpus/TARGET once the bug is fixed, so that the test suite replays it from
# then on). Ends with "N passed, N failed", one per target.
set -uo pipefail
build=${1:?usage: run.sh BUILD [SECONDS]}
seconds=${2:-60}
here=$(cd "$(dirname "$0")" && pwd)
status=0
passed=0
failed=0
targets=(key_extraction chunk_reader checkpoint_codec key_path)
# As many targets at once as there are cores (FUZZ_JOBS to choose): each still runs for SECONDS.
jobs=${FUZZ_JOBS:-$(nproc)}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || jobs=1  # (0 or not a number: one at a time, never no progress)

# run_target TARGET: fuzzes it; BUILD/fuzz-TARGET.passed says it held.
run_target() {
  local target=$1
  local corpus="$build/fuzz-corpus/$target"
  mkdir -p "$corpus"
  rm -f "$build/fuzz-$target.passed"
  # -timeout: an input that takes over 25 s is a finding (a hang), not a wait of libFuzzer's
  # default 20 minutes; `timeout` is the backstop should a target stop answering altogether.
  local options=(-max_total_time="$seconds" -timeout=25 -max_len=65536
                 -artifact_prefix="$build/fuzz-$target-")
  [ "$target" = key_extraction ] && options+=(-dict="$here/json.dict")
  if timeout $((seconds + 120)) "$build/tests/fuzz/${target}_fuzz" "${options[@]}" "$corpus" \
      "$here/corpus/$target" 2> "$build/fuzz-$target.log"; then
    touch "$build/fuzz-$target.passed"
  fi
}

for ((first = 0; first < ${#targets[@]}; first += jobs)); do
  batch=("${targets[@]:first:jobs}")
  for target in "${batch[@]}"; do run_target "$target" & done
  wait
  for target in "${batch[@]}"; do
    log="$build/fuzz-$target.log"
    if [ -e "$build/fuzz-$target.passed" ]; then
      echo "$target: nothing broke in ${seconds} s ($(grep -o 'Done [0-9]* runs' "$log" | tail -n 1))"
      passed=$((passed + 1))
    else
      tail -n 60 "$log" >&2
      echo "$target: an input broke it; see $log and $build/fuzz-$target-crash-*" >&2
      status=1
      failed=$((failed + 1))
    fi
  done
done
echo "$passed passed, $failed failed"
exit "$status"
