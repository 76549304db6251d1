# bash completion for keyshard(1). Source it, or install it as
# /usr/share/bash-completion/completions/keyshard. It needs nothing from the bash-completion
# package. tests/cli/docs_sync.sh fails when the flags here and those of --help drift apart.

_keyshard_top_flags='-h --help -V --version'
_keyshard_commands='split resume verify stats plan which'
# keyshard help [COMMAND]: the help of COMMAND, or of all.
_keyshard_words="$_keyshard_commands help"

# Every flag of each subcommand; those that take a value are listed in _keyshard_takes_value.
# split, stats and plan share the input and key options; split and stats share partitioning.
_keyshard_input_key_flags='--format --delimiter --no-validate --max-line-size
  -k --key --missing-key'
_keyshard_split_flags="-h --help $_keyshard_input_key_flags
  --salt --salt-by --hot-keys
  -n --partitions --hash -j --threads
  -o --output --name --compress --annotate --force
  --exec --exec-per --allow-early-exit
  --on-bad --dead-letter
  --checkpoint-every --commit --incremental --max-bad --max-skew
  -q --quiet --progress --no-progress -v --verbose"
_keyshard_resume_flags='-h --help -j --threads -q --quiet --progress --no-progress -v --verbose'
_keyshard_verify_flags='-h --help -q --quiet'
_keyshard_stats_flags="-h --help $_keyshard_input_key_flags
  -n --partitions --hash -j --threads
  --top --what-if-salt --json --progress --no-progress"
_keyshard_plan_flags="-h --help $_keyshard_input_key_flags
  --from --to --json"
_keyshard_which_flags='-h --help -n --partitions --hash'

_keyshard_hashes='murmur2 kafka crc32 consistent fnv1a md5 xxh3 jump'

# True when the flag $2 of subcommand $1 takes a value (the next word, or after '=').
_keyshard_takes_value() {
  case $1:$2 in
    split:* | stats:* | plan:*)
      case $2 in
        --format | --delimiter | --max-line-size | -k | --key | --missing-key) return 0 ;;
      esac ;;
  esac
  case $1:$2 in
    split:-n | split:--partitions | split:--hash | split:-j | split:--threads | \
      split:--salt | split:--salt-by | split:--hot-keys | \
      split:-o | split:--output | split:--name | split:--compress | split:--annotate | \
      split:--on-bad | split:--dead-letter | split:--exec | split:--exec-per | \
      split:--checkpoint-every | split:--commit | split:--max-bad | split:--max-skew | \
      resume:-j | resume:--threads | \
      stats:-n | stats:--partitions | stats:--hash | stats:-j | stats:--threads | \
      stats:--top | stats:--what-if-salt | \
      plan:--from | plan:--to | \
      which:-n | which:--partitions | which:--hash)
      return 0 ;;
  esac
  return 1
}

# COMPREPLY=(the words compgen prints), one per line, so that a file name may hold spaces.
_keyshard_reply() {
  mapfile -t COMPREPLY < <(compgen "$@")
}

# Readline replaces only the text after the last COMP_WORDBREAKS character of the word
# ('=' of --hash=md5, ':' of zstd:3); drop what comes before it from each candidate.
_keyshard_trim_to_word() {
  local word=$1 i
  for ((i = ${#word} - 1; i >= 0; i--)); do
    if [[ $COMP_WORDBREAKS == *"${word:i:1}"* ]]; then
      local keep=${word:0:i+1}
      COMPREPLY=("${COMPREPLY[@]#"$keep"}")
      return
    fi
  done
}

# Candidates for the value of flag $2 of subcommand $1, the value typed so far being $3.
_keyshard_values() {
  local command=$1 flag=$2 value=$3
  case $flag in
    --format) _keyshard_reply -W 'json delimited line' -- "$value" ;;
    --delimiter) _keyshard_reply -W 'tab space ,' -- "$value" ;;
    --hash) _keyshard_reply -W "$_keyshard_hashes" -- "$value" ;;
    --on-bad) _keyshard_reply -W 'dead-letter skip fail' -- "$value" ;;
    --annotate)
      # A comma-separated list: after the fields typed so far, each field not yet among them.
      local typed=${value%"${value##*,}"} field fields=''
      for field in partition offset key salt; do
        [[ ,$typed == *",$field,"* ]] || fields+=" $typed$field"
      done
      _keyshard_reply -W "$fields" -- "$value"
      ;;
    --checkpoint-every) _keyshard_reply -W 'auto off 64MiB 30s 5m' -- "$value" ;;
    --exec-per) _keyshard_reply -W 'partition worker' -- "$value" ;;
    --commit) _keyshard_reply -W 'sync async' -- "$value" ;;
    --hot-keys) _keyshard_reply -W 'auto auto:1% auto:2% auto:5% auto:10%' -- "$value" ;;
    --exec) _keyshard_reply -c -- "$value" ;;
    --compress)
      local levels="zstd none" level
      for ((level = 1; level <= 22; level++)); do levels+=" zstd:$level"; done
      _keyshard_reply -W "$levels" -- "$value"
      ;;
    --missing-key)
      _keyshard_reply -W 'bad partition:' -- "$value"
      [[ ${COMPREPLY[*]} == partition: ]] && compopt -o nospace 2>/dev/null
      ;;
    -o | --output)
      compopt -o filenames 2>/dev/null
      _keyshard_reply -d -- "$value"
      [[ -z $value ]] && COMPREPLY+=(-)
      ;;
    --dead-letter)
      compopt -o filenames 2>/dev/null
      _keyshard_reply -f -- "$value"
      ;;
    *) COMPREPLY=() ;;  # a number, a key path, a size or time, a template: nothing to offer
  esac
}

_keyshard() {
  COMPREPLY=()
  # Work on whitespace-separated words of the line up to the cursor, so that '=' and ':' do
  # not split a word as they do in COMP_WORDS.
  local line=${COMP_LINE:0:COMP_POINT}
  local cur=${line##*[[:space:]]}
  local -a words
  read -r -a words <<<"${line%"$cur"}"

  local command='' i after_dashdash=''
  for ((i = 1; i < ${#words[@]}; i++)); do
    local word=${words[i]}
    if [[ -z $command ]]; then
      [[ $word == -* ]] || command=$word
      continue
    fi
    [[ $word == -- ]] && after_dashdash=1
  done
  local prev=${words[${#words[@]} - 1]}

  if [[ -z $command ]]; then
    if [[ $cur == -* ]]; then
      _keyshard_reply -W "$_keyshard_top_flags" -- "$cur"
    else
      _keyshard_reply -W "$_keyshard_words" -- "$cur"
    fi
    return
  fi
  if [[ $command == help ]]; then
    [[ ${#words[@]} -eq 2 ]] && _keyshard_reply -W "$_keyshard_commands" -- "$cur"
    return
  fi

  local flags
  case $command in
    split) flags=$_keyshard_split_flags ;;
    resume) flags=$_keyshard_resume_flags ;;
    verify) flags=$_keyshard_verify_flags ;;
    stats) flags=$_keyshard_stats_flags ;;
    plan) flags=$_keyshard_plan_flags ;;
    which) flags=$_keyshard_which_flags ;;
    *) return ;;
  esac

  if [[ -z $after_dashdash ]]; then
    if [[ $cur == --*=* ]] && _keyshard_takes_value "$command" "${cur%%=*}"; then
      _keyshard_values "$command" "${cur%%=*}" "${cur#*=}"
      COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
      _keyshard_trim_to_word "$cur"
      return
    fi
    if _keyshard_takes_value "$command" "$prev"; then
      _keyshard_values "$command" "$prev" "$cur"
      _keyshard_trim_to_word "$cur"
      return
    fi
    if [[ $cur == -* ]]; then
      _keyshard_reply -W "$flags" -- "$cur"
      return
    fi
  fi

  # Positionals: input files for split, stats and plan; the output directory for resume and
  # verify; keys (nothing to offer) for which.
  case $command in
    resume | verify)
      compopt -o filenames 2>/dev/null
      _keyshard_reply -d -- "$cur"
      ;;
    which) ;;
    *)
      compopt -o filenames 2>/dev/null
      _keyshard_reply -f -- "$cur"
      ;;
  esac
}

complete -F _keyshard keyshard
