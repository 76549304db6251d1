#!/usr/bin/env bash
# help_golden: the --help texts are part of keyshard's interface, so each is kept as a golden
# file (tests/cli/golden/help-top.txt, help-SUBCOMMAND.txt) and a change shows up as a diff to
# review. The subcommands are read from `keyshard --help`, so a new one needs a new golden file.
# Every line of every --help must also fit in 79 columns, the width of a plain terminal.
#
# Env: KEYSHARD (the built binary), SOURCE_DIR (the repository root), UPDATE_GOLDEN=1 to rewrite
# the golden files from the binary instead of comparing. Exit 0 pass, 1 fail.
set -uo pipefail

source_dir="${SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
keyshard="${KEYSHARD:-}"
golden_dir="$source_dir/tests/cli/golden"
max_columns=79

failures=0
fail() {
  echo "help_golden: FAIL: $*"
  failures=$((failures + 1))
}

if [[ -z "$keyshard" || ! -x "$keyshard" ]]; then
  echo "help_golden: FAIL: KEYSHARD='$keyshard' is not an executable (set it to the built binary)"
  exit 1
fi

# The help of `keyshard ARGS... --help`, run as plain "keyshard" so that the usage line does not
# depend on where the binary was built.
help_text() { (exec -a keyshard "$keyshard" "$@" --help); }

commands_in_help() {
  awk '/^Subcommands:/ { inside = 1; next }
       inside && /^[^ ]/ { inside = 0 }
       inside && /^  [a-z]/ { print $1 }'
}

if ! top_help="$(help_text 2>&1)"; then
  echo "help_golden: FAIL: 'keyshard --help' exited with an error:"
  echo "$top_help"
  exit 1
fi
mapfile -t commands < <(commands_in_help <<<"$top_help")

# Each case: golden file name, then the arguments before --help.
cases=("help-top.txt")
for command in "${commands[@]}"; do cases+=("help-$command.txt $command"); done

work_dir="$(mktemp -d)"
trap 'rm -rf "$work_dir"' EXIT
[[ "${UPDATE_GOLDEN:-}" == 1 ]] && mkdir -p "$golden_dir"

export LC_ALL=C.UTF-8  # count columns in characters, not bytes
for entry in "${cases[@]}"; do
  read -r golden_name args <<<"$entry"
  read -r -a arguments <<<"${args:-}"
  shown="keyshard${args:+ $args} --help"
  live="$work_dir/$golden_name"
  if ! help_text "${arguments[@]}" >"$live" 2>&1; then
    fail "'$shown' exited with an error:"
    cat "$live"
    continue
  fi

  golden="$golden_dir/$golden_name"
  if [[ "${UPDATE_GOLDEN:-}" == 1 ]]; then
    if ! cmp -s "$live" "$golden"; then
      cp "$live" "$golden"
      echo "help_golden: updated tests/cli/golden/$golden_name"
    fi
  elif [[ ! -f "$golden" ]]; then
    fail "no golden file tests/cli/golden/$golden_name for '$shown'" \
      "(run with UPDATE_GOLDEN=1 to create it)"
  elif ! diff -u --label "tests/cli/golden/$golden_name" --label "$shown" "$golden" "$live"; then
    fail "'$shown' differs from tests/cli/golden/$golden_name (the diff is above; if the change" \
      "is meant, run with UPDATE_GOLDEN=1 and commit the new golden file)"
  fi

  line_number=0
  while IFS= read -r line; do
    line_number=$((line_number + 1))
    if ((${#line} > max_columns)); then
      fail "'$shown' line $line_number is ${#line} columns (at most $max_columns): $line"
    fi
  done <"$live"
done

# A golden file whose subcommand is gone would never be compared again.
for golden in "$golden_dir"/help-*.txt; do
  [[ -e "$golden" ]] || continue
  name="$(basename "$golden")"
  known=0
  for entry in "${cases[@]}"; do [[ "${entry%% *}" == "$name" ]] && known=1; done
  ((known)) || fail "tests/cli/golden/$name belongs to no subcommand of 'keyshard --help'" \
    "(remove it)"
done

if ((failures > 0)); then
  echo "help_golden: $failures problem(s)"
  exit 1
fi
echo "help_golden: PASS: ${#cases[@]} help texts match their golden files and fit in" \
  "$max_columns columns"
exit 0
