#!/usr/bin/env bash
# docs_sync: the man page and the shell completions must know every flag that --help shows, and
# the completions must offer no flag that --help does not show. The flags and the subcommands
# are read from the real binary's --help, so a new flag or subcommand is picked up by itself.
# Each completion is also loaded in its own shell (bash always; zsh and fish when installed) and,
# where the shell can be asked from a script (bash, fish), asked what it offers for each
# subcommand. The man page is run through groff when groff is installed.
#
# Env: KEYSHARD (the built binary), SOURCE_DIR (the repository root). Exit 0 pass, 1 fail.
set -uo pipefail

source_dir="${SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
keyshard="${KEYSHARD:-}"
man_page="$source_dir/man/keyshard.1"
bash_completion="$source_dir/completions/keyshard.bash"
zsh_completion="$source_dir/completions/_keyshard"
fish_completion="$source_dir/completions/keyshard.fish"

failures=0
fail() {
  echo "docs_sync: FAIL: $*"
  failures=$((failures + 1))
}
say() { echo "docs_sync: $*"; }

if [[ -z "$keyshard" || ! -x "$keyshard" ]]; then
  echo "docs_sync: FAIL: KEYSHARD='$keyshard' is not an executable (set it to the built binary)"
  exit 1
fi
for file in "$man_page" "$bash_completion" "$zsh_completion" "$fish_completion"; do
  [[ -f "$file" ]] || fail "$file is missing"
done
((failures == 0)) || exit 1

# --- What --help says ---------------------------------------------------------------------------

# The flags an option table of a --help lists, one per line: CLI11 writes each option as
# "  -k,--key PATH ..." (two spaces, then the names joined by commas, then the value).
flags_in_help() {
  sed -nE 's/^  (-[^ ]+).*/\1/p' | tr ',' '\n' | grep -E '^--?[[:alnum:]]' | sort -u
}

# The subcommands listed under "Subcommands:" in the top-level --help.
commands_in_help() {
  awk '/^Subcommands:/ { inside = 1; next }
       inside && /^[^ ]/ { inside = 0 }
       inside && /^  [a-z]/ { print $1 }'
}

if ! top_help="$("$keyshard" --help 2>&1)"; then
  echo "docs_sync: FAIL: '$keyshard --help' exited with an error:"
  echo "$top_help"
  exit 1
fi
mapfile -t commands < <(commands_in_help <<<"$top_help")
if ((${#commands[@]} == 0)); then
  echo "docs_sync: FAIL: found no subcommand under 'Subcommands:' in '$keyshard --help'"
  exit 1
fi

declare -A flags_of  # "-" (the top level) or a subcommand -> its flags, one per line
flags_of[-]="$(flags_in_help <<<"$top_help")"
for command in "${commands[@]}"; do
  if ! help="$("$keyshard" "$command" --help 2>&1)"; then
    fail "'keyshard $command --help' exited with an error"
    continue
  fi
  flags_of[$command]="$(flags_in_help <<<"$help")"
  [[ -n "${flags_of[$command]}" ]] || fail "found no option in 'keyshard $command --help'"
done

# Every long flag of every --help, one per line.
all_long_flags="$(printf '%s\n' "${flags_of[@]}" | grep -E '^--' | sort -u)"

# --- The man page -----------------------------------------------------------------------------

# roff writes a literal minus as \- ; read the page as the user sees the names.
man_text="$(sed 's/\\-/-/g' "$man_page")"
has_word() {  # has_word TEXT WORD: WORD stands in TEXT, not as part of a longer flag
  grep -qE -- "(^|[^[:alnum:]-])$2([^[:alnum:]-]|\$)" <<<"$1"
}
while read -r flag; do
  has_word "$man_text" "$flag" || fail "man/keyshard.1 does not document $flag"
done <<<"$all_long_flags"
commands_section="$(awk '/^\.SH/ { inside = ($2 == "COMMANDS") } inside' "$man_page")"
for command in "${commands[@]}"; do
  grep -qxE "\.BR? $command( .*)?" <<<"$commands_section" ||
    fail "man/keyshard.1 has no entry for '$command' under COMMANDS"
done

if command -v groff >/dev/null; then
  groff_warnings="$(groff -ww -z -man "$man_page" 2>&1)"
  if [[ -n "$groff_warnings" ]]; then
    fail "groff -ww -z -man man/keyshard.1 warns:"
    echo "$groff_warnings"
  fi
else
  say "SKIP: groff is not installed, so the man page was not checked for warnings" \
    "('make deps' installs it)"
fi

# --- The completion files, as text --------------------------------------------------------------

# The long flags a completion file names. bash and zsh spell them out (comments aside); fish
# names them after -l (its own long options, such as --condition, are not keyshard's) in its
# `complete` commands, which may go on over lines ended by a backslash.
long_flags_in_file() {
  local fish_long='(^|[[:space:]])(-l|--long-option|--long)[[:space:]=]+[[:alnum:]][[:alnum:]-]*'
  case "$1" in
    *.fish)
      sed -e ':join' -e '/\\$/{N;s/\\\n//;b join' -e '}' "$1" |
        grep -E '^[[:space:]]*complete[[:space:]]' |
        grep -oE -- "$fish_long" |
        sed -E 's/.*[[:space:]=]([[:alnum:]][[:alnum:]-]*)$/--\1/'
      ;;
    *)
      grep -vE '^[[:space:]]*#' "$1" | grep -oE -- '--[[:alnum:]][[:alnum:]-]*'
      ;;
  esac | sort -u
}

for file in "$bash_completion" "$zsh_completion" "$fish_completion"; do
  name="completions/$(basename "$file")"
  offered="$(long_flags_in_file "$file")"
  while read -r flag; do
    grep -qxF -- "$flag" <<<"$offered" || fail "$name does not offer $flag"
  done <<<"$all_long_flags"
  while read -r flag; do
    [[ -z "$flag" ]] && continue
    grep -qxF -- "$flag" <<<"$all_long_flags" ||
      fail "$name offers $flag, which no 'keyshard ... --help' lists (stale completion)"
  done <<<"$offered"
  for command in "${commands[@]}"; do
    grep -qw -- "$command" "$file" || fail "$name does not offer the subcommand '$command'"
  done
done

# --- The completions, loaded for real -----------------------------------------------------------

# compare WHAT EXPECTED OFFERED: both are lists, one item per line; reports the difference.
compare() {
  local what="$1" expected offered missing extra
  expected="$(sort -u <<<"$2" | sed '/^$/d')"
  offered="$(sort -u <<<"$3" | sed '/^$/d')"
  missing="$(comm -23 <(echo "$expected") <(echo "$offered") | sed '/^$/d' | tr '\n' ' ')"
  extra="$(comm -13 <(echo "$expected") <(echo "$offered") | sed '/^$/d' | tr '\n' ' ')"
  [[ -z "$missing" ]] || fail "$what: does not offer ${missing% }"
  [[ -z "$extra" ]] || fail "$what: offers ${extra% }, which --help does not list"
}

# What bash offers when Tab is pressed at the end of LINE, the way bash calls the function.
bash_offers() {
  bash --norc --noprofile -c '
    source "$1" || exit 1
    COMP_LINE="$2"; COMP_POINT=${#2}
    read -r -a COMP_WORDS <<<"$2"; [[ "$2" == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    function=$(complete -p keyshard | sed -nE "s/.* -F ([^ ]+) .*/\1/p")
    "$function" keyshard "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf "%s\n" "${COMPREPLY[@]}"' bash "$bash_completion" "$1"
}

if load="$(bash --norc --noprofile -c 'source "$1" && complete -p keyshard' bash \
  "$bash_completion" 2>&1)"; then
  compare "bash, 'keyshard <Tab>'" "$(printf '%s\n' "${commands[@]}" help)" \
    "$(bash_offers 'keyshard ')"
  compare "bash, 'keyshard help <Tab>'" "$(printf '%s\n' "${commands[@]}")" \
    "$(bash_offers 'keyshard help ')"
  compare "bash, 'keyshard -<Tab>'" "${flags_of[-]}" "$(bash_offers 'keyshard -')"
  for command in "${commands[@]}"; do
    compare "bash, 'keyshard $command -<Tab>'" "${flags_of[$command]}" \
      "$(bash_offers "keyshard $command -")"
  done
  # Values: --annotate's list goes on after a comma with the fields not yet in it.
  compare "bash, 'keyshard split --annotate partition,<Tab>'" \
    "$(printf '%s\n' partition,offset partition,key partition,salt)" \
    "$(bash_offers 'keyshard split --annotate partition,')"
  compare "bash, 'keyshard split --annotate key,salt,o<Tab>'" "key,salt,offset" \
    "$(bash_offers 'keyshard split --annotate key,salt,o')"
  compare "bash, 'keyshard split --checkpoint-every <Tab>'" \
    "$(printf '%s\n' auto off 64MiB 30s 5m)" \
    "$(bash_offers 'keyshard split --checkpoint-every ')"
else
  fail "completions/keyshard.bash does not load in bash ('complete -p keyshard' failed):"
  echo "$load"
fi

if command -v zsh >/dev/null; then
  # compinit -D: no dump file; autoload +X: read and parse the function now.
  if ! load="$(zsh -n "$zsh_completion" 2>&1 && cd "$(dirname "$zsh_completion")" && zsh -fc '
      fpath=("$PWD" $fpath)
      autoload -Uz compinit && compinit -u -D &&
        autoload +X -Uz _keyshard && [[ ${_comps[keyshard]} == _keyshard ]]' 2>&1)"; then
    fail "completions/_keyshard does not load in zsh (compinit does not bind it to keyshard):"
    echo "$load"
  fi
else
  say "SKIP: zsh is not installed, so completions/_keyshard was not loaded ('make deps'" \
    "installs it)"
fi

if command -v fish >/dev/null; then
  # shellcheck disable=SC2016  # $argv is fish's, expanded by fish
  fish_offers() {
    fish --no-config -c 'source $argv[1]; and complete -C$argv[2]' "$fish_completion" "$1" |
      cut -f1
  }
  # shellcheck disable=SC2016
  load="$(fish --no-config -c 'source $argv[1]' "$fish_completion" 2>&1)"
  if [[ $? -eq 0 && -z "$load" ]]; then
    compare "fish, 'keyshard <Tab>'" "$(printf '%s\n' "${commands[@]}" help)" \
      "$(fish_offers 'keyshard ' | grep -v '^-')"
    compare "fish, 'keyshard help <Tab>'" "$(printf '%s\n' "${commands[@]}")" \
      "$(fish_offers 'keyshard help ')"
    compare "fish, 'keyshard -<Tab>'" "${flags_of[-]}" "$(fish_offers 'keyshard -')"
    for command in "${commands[@]}"; do
      compare "fish, 'keyshard $command -<Tab>'" "${flags_of[$command]}" \
        "$(fish_offers "keyshard $command -")"
    done
    # Values: --annotate's list goes on after a comma with the fields not yet in it, as in bash.
    compare "fish, 'keyshard split --annotate partition,<Tab>'" \
      "$(printf '%s\n' partition,offset partition,key partition,salt)" \
      "$(fish_offers 'keyshard split --annotate partition,')"
    compare "fish, 'keyshard split --annotate=salt,<Tab>'" \
      "$(printf '%s\n' --annotate=salt,offset --annotate=salt,key --annotate=salt,partition)" \
      "$(fish_offers 'keyshard split --annotate=salt,')"
  else
    fail "completions/keyshard.fish does not load in fish:"
    echo "$load"
  fi
else
  say "SKIP: fish is not installed, so completions/keyshard.fish was not loaded ('make deps'" \
    "installs it)"
fi

# --- Verdict ------------------------------------------------------------------------------------

flag_count=$(wc -l <<<"$all_long_flags")
if ((failures > 0)); then
  say "$failures problem(s); the man page and completions must follow --help" \
    "(${#commands[@]} subcommands, $flag_count long flags)"
  exit 1
fi
say "PASS: man page and completions agree with --help (${#commands[@]} subcommands," \
  "$flag_count long flags)"
exit 0
