#!/usr/bin/env bash
# The command line: refusals with exit status 2 and a message that says what to do, the output
# directory rules, the name template, annotations, large -n and the open-file limit.
source "$(dirname "$0")/lib.sh"

printf '{"id":"a"}\n{"id":"b"}\n{"id":"c"}\n' > in.ndjson

run_status ks split -n 2 -o out in.ndjson
expect_eq "$STATUS" 2 "no -k"
expect_contains "$ERR" "-k user_id" "hint for -k"

run_status ks split -k id -o out in.ndjson
expect_eq "$STATUS" 2 "no -n"
run_status ks split -k id -n 2 in.ndjson
expect_eq "$STATUS" 2 "no -o"
run_status ks split -k id -n 2 --hash murmur3 -o out in.ndjson
expect_eq "$STATUS" 2 "unknown --hash"
run_status ks split -k id -n 0 -o out in.ndjson
expect_eq "$STATUS" 2 "-n 0"
run_status ks split -k 'a..b' -n 2 -o out in.ndjson
expect_eq "$STATUS" 2 "bad key path"
expect_contains "$ERR" 'literal dot' "key path hint"
run_status ks split -k id -n 2 --compress gzip -o out in.ndjson
expect_eq "$STATUS" 2 "bad --compress"
run_status ks split -k id -n 2 --name fixed.ndjson -o out in.ndjson
expect_eq "$STATUS" 2 "--name without {partition}"
# Every partition's name is checked before anything is written, not only the first two.
rm -rf out
run_status ks split -k id -n 64 --name 'p{partition:c}' -o out in.ndjson
expect_eq "$STATUS" 2 "--name that gives a partition a NUL byte"
expect_contains "$ERR" "partition 0's name would hold a NUL byte" "--name with a NUL: which partition"
[ ! -e out ] || [ -z "$(ls -A out)" ] || fail "a refused --name wrote files"
# A name longer than a file name may be is refused at once, whatever width the template asks
# (a width of a hundred million once took 640 MB and printed the whole name).
for template in 'p{partition:0>100000000}' 'p{partition:0>300}' 'p{partition:0>{partition}}'; do
  run_status ks split -k id -n 300 --name "$template" -o out in.ndjson
  expect_eq "$STATUS" 2 "--name $template: too long"
  expect_contains "$ERR" "name would be longer than 255 bytes" "--name $template: why"
  [ "${#ERR}" -lt 400 ] || fail "--name $template: a short message, not the name"
done
expect_contains "$ERR" "partition 255's name" "--name with a growing width: the first too long"
[ ! -e out ] || [ -z "$(ls -A out)" ] || fail "a too long --name wrote files"
# A bad template past the length is refused, not a crash (fmt copies out its buffer as the
# format error unwinds).
for template in 'p{partition:0>300}{bogus}' 'p{partition:0>300}{bogus' 'p{partition:0>1000}{x}'; do
  for output in out -; do
    run_status ks split -k id -n 2 --name "$template" -o "$output" in.ndjson
    expect_eq "$STATUS" 2 "--name $template -o $output"
    expect_contains "$ERR" "invalid --name" "--name $template -o $output: why"
  done
done
run_status ks split -k id -n 2 --name 'p{partition:0>250}' --compress zstd -o long-names in.ndjson
expect_eq "$STATUS" 0 "--name of 251 bytes, 255 with .zst"
rm -rf long-names
# An option given as '' is refused, not taken as not given.
for option in --salt-by --exec --hot-keys --compress --dead-letter --max-bad --max-skew --annotate
do
  run_status ks split -k id -n 2 "$option" '' -o out in.ndjson
  expect_eq "$STATUS" 2 "$option ''"
  expect_contains "$ERR" "keyshard: $option: " "$option '': named"
  [[ "$ERR" != *"did you mean"* ]] || fail "$option '': no guess: $ERR"
done
[ ! -e out ] || [ -z "$(ls -A out)" ] || fail "an empty option wrote files"
run_status ks split -k id -n 2 --missing-key partition:2 -o out in.ndjson
expect_eq "$STATUS" 2 "--missing-key out of range"
run_status ks split -k id -n 2 -o out missing.ndjson
expect_eq "$STATUS" 1 "missing input"
expect_contains "$ERR" "keyshard: missing.ndjson: cannot open" "missing input message"
run_status ks frobnicate
expect_eq "$STATUS" 2 "unknown subcommand"
run_status ks
expect_eq "$STATUS" 2 "no command"
expect_contains "$ERR" "a command is required: one of split, " "no command: the commands listed"
expect_contains "$ERR" "Run 'keyshard --help'" "no command: where to look"
run_status ks splt -k id -n 2 -o out in.ndjson
expect_eq "$STATUS" 2 "misspelt subcommand"
expect_contains "$ERR" "did you mean 'split'?" "subcommand suggestion"
run_status ks split -k id -n 2 --partitons 3 -o out in.ndjson
expect_eq "$STATUS" 2 "misspelt flag"
expect_contains "$ERR" "did you mean '--partitions'?" "flag suggestion"
expect_contains "$ERR" "keyshard split --help" "where to look"
run_status ks split -k id -n 2 --hash murmur3 -o out in.ndjson
expect_contains "$ERR" "did you mean 'murmur2'?" "--hash suggestion"
pass "usage errors"

# -k takes one path: the words after it are inputs, not more key parts.
ks split -n 2 -o after-k -k id in.ndjson -q < /dev/null
expect_eq "$(cat after-k/part-*.ndjson | wc -l)" 3 "input after -k"
pass "-k then inputs"

run_status ks --version
expect_eq "$STATUS" 0 "--version"
expect_contains "$OUT" "simdjson" "--version names simdjson"
expect_contains "$OUT" "zstd" "--version names zstd"
pass "--version"

# A non-empty output directory needs --force.
mkdir full && echo keep > full/notes.txt
run_status ks split -k id -n 2 -o full in.ndjson
expect_eq "$STATUS" 2 "non-empty directory"
expect_contains "$ERR" "--force" "hint for --force"
ks split -k id -n 2 -o full --force -q in.ndjson
expect_eq "$(cat full/notes.txt)" keep "other files are left alone"
expect_eq "$(cat full/part-*.ndjson | wc -l)" 3 "written with --force"
pass "--force"

# -v adds the time each stage took.
ks split -k id -n 2 -o verbose -v in.ndjson 2> verbose.err
expect_contains "$(cat verbose.err)" "stages (thread-seconds): read" "-v timings"
pass "-v"

# --name template.
ks split -k id -n 3 --name 'shard-{partition}-of-{partitions}.json' -o named -q in.ndjson
for p in 0 1 2; do [ -f "named/shard-$p-of-3.json" ] || fail "missing named/shard-$p-of-3.json"; done
pass "--name"

# --annotate adds _partition and _offset (index within the partition).
printf '{"id":"a","v":1}\n{}\n{"id":"a","v":2}\r\n' > ann.ndjson
ks split -k id -n 2 --missing-key partition:1 --annotate partition,offset -o - -q ann.ndjson > ann.out
run_status ks split -k id -n 2 --annotate partition,offset,partition -o - -q ann.ndjson
expect_eq "$STATUS" 2 "--annotate with a field named twice"
expect_contains "$ERR" '--annotate names "partition" twice' "the field named twice is named"
# "--" ends the options wherever it comes, also after an input (CLI11 alone would take it only
# before the first); one that is an option's value (-k --) is that value.
printf '{"k":"a"}\n' > ./-dash.ndjson
ks split -k k -n 2 -o - -q ann.ndjson -- -dash.ndjson > dashes.out
expect_eq "$(tail -n 1 dashes.out)" '{"k":"a"}' "an input after -- that follows an input"
expect_eq "$(ks which -n 8 a -- -b --hash | wc -l)" 3 "keys after -- that follows a key"
expect_eq "$(ks which -n 8 -- -b)" "$(printf '%s\n' -b | ks which -n 8)" "a key after -- alone"
expect_eq "$(printf '{"--":"x"}\n' | ks split -q -k -- -n 2 -o -)" '{"--":"x"}' \
  "-k -- names the field --"
run_status ks split --format line --no-validate -n 2 -o - -q ann.ndjson
expect_eq "$STATUS" 0 "--no-validate with --format line"
expect_contains "$ERR" "warning: --no-validate changes nothing with --format line" "its warning"
run_status ks split --format delimited --delimiter $'\n' -k 1 -n 2 -o - -q ann.ndjson
expect_eq "$STATUS" 2 "a newline as --delimiter"
expect_contains "$ERR" "invalid --delimiter: a newline ends each line" "says why"
# A key part named twice (however spelt) makes a key of its value twice over: a warning.
run_status ks split -k id -k /id -n 2 -o - -q ann.ndjson
expect_eq "$STATUS" 0 "-k with one path twice"
expect_contains "$ERR" "warning: -k names one path twice, as \"id\" and \"/id\": the key is its \
value twice over, joined by the byte 0x1F" "both spellings named"
expect_eq "$(head -n 1 <<< "$OUT")" '{"id":"a","v":1}' "the run goes on"
run_status ks split --format delimited -k 2 -k 1 -k 2 -n 2 -o - -q ann.ndjson
expect_eq "$STATUS" 0 "-k with one field twice"
expect_contains "$ERR" 'warning: -k names "2" twice' "the field named"
# Named many times, a part is warned of once.
run_status ks split -k id -k /id -k id -k id -n 2 -o - -q ann.ndjson
expect_eq "$(grep -c 'warning: -k names' <<< "$ERR")" 1 "one warning for a path named four times"
run_status ks split --format delimited -k 2 -k 2 -k 2 -n 2 -o - -q ann.ndjson
expect_eq "$(grep -c 'warning: -k names' <<< "$ERR")" 1 "one warning for a field named three times"
p=$(ks which -n 2 a)
expect_eq "$(sed -n 1p ann.out)" "{\"id\":\"a\",\"v\":1,\"_partition\":$p,\"_offset\":0}" "annotated line"
expect_eq "$(sed -n 2p ann.out)" '{"_partition":1,"_offset":'"$([ "$p" = 1 ] && echo 1 || echo 0)"'}' "annotated empty object"
expect_eq "$(sed -n 3p ann.out)" "{\"id\":\"a\",\"v\":2,\"_partition\":$p,\"_offset\":$([ "$p" = 1 ] && echo 2 || echo 1)}"$'\r' "annotated CRLF line"
pass "--annotate"

# --annotate key: an event without a key gets null, which tells it from the empty key.
printf '{"id":"a"}\n{"v":1}\n{"id":""}\n' > keyless.ndjson
ks split -k id -n 1 --missing-key partition:0 --annotate key -o - -q keyless.ndjson > keyless.out
expect_eq "$(cat keyless.out)" "$(printf '%s\n' '{"id":"a","_key":"a"}' '{"v":1,"_key":null}' \
  '{"id":"","_key":""}')" "--annotate key on a keyless event"
pass "--annotate key, keyless"

# -n 4096 works (the soft open-file limit is raised as needed).
python3 -c 'import sys; [print("{\"id\":\"k%d\"}" % i) for i in range(20000)]' > many.ndjson
( ulimit -S -n 1024 2>/dev/null || true; ks split -k id -n 4096 -o wide -q many.ndjson )
expect_eq "$(ls wide | grep -c '^part-')" 4096 "4096 partition files"
expect_eq "$(cat wide/part-*.ndjson | wc -l)" 20000 "all events in 4096 partitions"
# resume raises it too: a run stopped by a missing second input, resumed once it is there.
( ulimit -S -n 1024 2>/dev/null || true
  run_status ks split -k id -n 4096 -o wide-resumed -q many.ndjson later.ndjson
  expect_eq "$STATUS" 1 "-n 4096 stopped by a missing input" )
printf '{"id":"last"}\n' > later.ndjson
run_status bash -c 'ulimit -n 256 && "$0" resume -q wide-resumed' "$KEYSHARD"
expect_eq "$STATUS" 2 "resume of -n 4096 with too few open files"
expect_contains "$ERR" "-n 4096 needs about" "resume names the limit before it starts"
( ulimit -S -n 1024 2>/dev/null || true; ks resume -q wide-resumed )
expect_eq "$(cat wide-resumed/part-*.ndjson | wc -l)" 20001 "all events after resume, -n 4096"
pass "-n 4096"

# When the hard limit is too low, fail early and say what to do.
run_status bash -c 'ulimit -n 256 && "$0" split -k id -n 1000 -o low -q in.ndjson' "$KEYSHARD"
expect_eq "$STATUS" 2 "too few open files"
expect_contains "$ERR" "open files" "the message names the limit"
expect_contains "$ERR" "fewer partitions" "the message says what to do"
[ ! -e low ] || fail "no trace of a run refused for the limit: $(find low)"
# The limit is judged before each partition's file is looked at (which took seconds at -n in
# the hundreds of thousands): a FIFO in a partition's place is not what the refusal names.
mkdir -p low-fifo && mkfifo low-fifo/part-00000.ndjson
run_status bash -c 'ulimit -n 256 && "$0" split -k id -n 1000 -o low-fifo --force -q in.ndjson' \
  "$KEYSHARD"
expect_eq "$STATUS" 2 "too few open files, a FIFO in DIR"
expect_contains "$ERR" "-n 1000 needs about" "the limit named first"
# With a child per worker, -j sets the count, whatever -n: so says the message.
run_status bash -c 'ulimit -n 64 && "$0" split -k id -n 1 -j 20 --exec cat --exec-per worker \
  -o low -q in.ndjson' "$KEYSHARD"
expect_eq "$STATUS" 2 "too few open files for 20 workers' children"
expect_contains "$ERR" "-j 20 with --exec-per worker needs about" "names what sets the count"
expect_contains "$ERR" "or use fewer workers (-j)." "and what to lower"
# Descriptors inherited open count too: 200 of them under a limit of 1,100 leave too few for
# -n 1024, which is refused before anything is made, not failing part way through its files.
run_status bash -c 'ulimit -n 1100 && exec 3</dev/null && for fd in $(seq 10 209); do
  eval "exec $fd</dev/null"; done && exec "$0" split -k id -n 1024 -o inherited -q in.ndjson' \
  "$KEYSHARD"
expect_eq "$STATUS" 2 "-n 1024 with 200 descriptors inherited under a limit of 1,100"
expect_contains "$ERR" "of them open already, inherited from what started keyshard" \
  "the message counts the inherited descriptors"
[ ! -e inherited ] || fail "inherited descriptors: DIR made"
pass "open-file limit"

# `keyshard help [COMMAND]` is --help; compressed data is not written to a terminal.
expect_eq "$(ks help)" "$(ks --help)" "keyshard help"
expect_eq "$(ks help split)" "$(ks split --help)" "keyshard help split"
run_status ks help split verify
expect_eq "$STATUS" 2 "keyshard help with two commands"
expect_eq "$ERR" "keyshard: help takes one command name at most, as in 'keyshard help split'" \
  "says what to type"
printf '{"id":"a"}\n' > one-line.ndjson
script -qefc "'$KEYSHARD' split -k id -n 2 -o - --compress zstd one-line.ndjson" /dev/null \
  > compress-tty.out || true
expect_contains "$(cat compress-tty.out)" "--compress -o - writes zstd data, which is not for a \
terminal" "--compress -o - to a terminal"

# A refused run leaves the directory as it found it: no lock, no state directory, and no
# directories it made for the run.
mkdir taken && touch taken/mine.txt
run_status ks split -k id -n 2 -o taken in.ndjson
expect_eq "$STATUS" 2 "a directory that is not empty"
expect_eq "$(cd taken && find . | sort | tr '\n' ' ')" ". ./mine.txt " "what a refused run leaves"
run_status ks split -k id -n 2 -o made/for/it --dead-letter made/for/it/part-00000.ndjson in.ndjson
expect_eq "$STATUS" 2 "a dead-letter file among the outputs"
[ ! -e made ] || fail "no trace of a refused run: $(find made)"
# DIR as a symbolic link to nothing, or under a regular file: no directory can be made there.
ln -s nowhere dangling-dir
run_status ks split -k id -n 2 -o dangling-dir in.ndjson
expect_eq "$STATUS" 2 "DIR a dangling symbolic link"
expect_eq "$ERR" "keyshard: dangling-dir: is a symbolic link to nowhere, which does not exist: \
create that directory, or name another DIR" "says where the link leads"
touch plain-file
run_status ks split -k id -n 2 -o plain-file/sub in.ndjson
expect_eq "$STATUS" 2 "DIR under a regular file"
expect_contains "$ERR" "plain-file/sub: cannot create the output directory: Not a directory" \
  "says why"
pass "a refused run leaves no trace"

# Help that cannot be written is a failure (exit 1, saying why); a reader that stops early is not.
for args in "--help" "split --help" "--version"; do
  run_status bash -c "\"\$KEYSHARD\" $args > /dev/full"
  expect_eq "$STATUS" 1 "keyshard $args > /dev/full"
  expect_contains "$ERR" "cannot write to standard output: No space left on device" \
    "keyshard $args > /dev/full: why"
done
run_status bash -c '"$KEYSHARD" split --help | head -1'
expect_eq "$STATUS" 0 "keyshard split --help | head -1"
expect_eq "$ERR" "" "nothing on stderr when the reader stops early"
pass "help to a full disk or a closed pipe"

# --help wins over a mistake elsewhere on the line: a bad value, a misspelt one, an unknown
# option. After "--" it is a file name.
for args in "which -n 0" "stats --top 0" "stats --hash nope" "split --hash=" "split --bogus"; do
  command=${args%% *}
  run_status ks $args --help
  expect_eq "$STATUS" 0 "keyshard $args --help"
  expect_eq "$OUT" "$(ks "$command" --help)" "keyshard $args --help: the help of $command"
  expect_eq "$ERR" "" "keyshard $args --help: no complaint"
done
run_status ks which -n 0 -- --help
expect_eq "$STATUS" 2 "--help after --"
pass "--help wins over a mistake elsewhere"

# An unknown option is named, not the words after it; resume says which options it takes.
run_status ks split -k id -n 2 -o out --threds=3 in.ndjson
expect_eq "$STATUS" 2 "unknown option: exit status"
expect_contains "$ERR" "unknown option '--threds'" "the unknown option is named"
expect_contains "$ERR" "did you mean '--threads'?" "and the likely one suggested"
mkdir -p stopped
run_status ks resume -n 4 stopped
expect_eq "$STATUS" 2 "resume -n: exit status"
expect_contains "$ERR" "unknown option '-n' (resume continues with the options the run was started with" \
  "resume -n: the option is named, not the directory"
[[ "$ERR" != *"stopped"* ]] || fail "resume -n: the directory is not blamed: $ERR"
pass "unknown options are named"

# A "--" before the operands, with a required option missing, is not taken for an unknown option
# (nor is an operand after it that begins with a dash): what is missing is named.
for args in "which -- a" "which -- -x" "stats -k id -- in.ndjson" "split -k id -o - -- in.ndjson"; do
  # shellcheck disable=SC2086  # (the words of $args, split)
  run_status ks $args
  expect_eq "$STATUS" 2 "keyshard $args: exit status"
  expect_contains "$ERR" "no partition count: give one with -n" "keyshard $args: -n is missing"
done
run_status ks plan -k id --from 2 -- in.ndjson
expect_contains "$ERR" "no --to: give the partition count after" "plan ... -- : --to is missing"
# An empty word for an input or DIR (an unset variable: "$LOG") is a usage error that says so.
for command in split stats plan; do
  case $command in
    split) extra=(-n 2 -o empty-word) ;;
    stats) extra=(-n 2) ;;
    plan) extra=(--from 2 --to 3) ;;
  esac
  run_status ks "$command" -k id "${extra[@]}" in.ndjson ''
  expect_eq "$STATUS" 2 "$command with an empty input name: exit status"
  expect_contains "$ERR" "an input is named by an empty word ('')" "$command: the empty name"
done
for command in verify resume; do
  run_status ks "$command" ''
  expect_eq "$STATUS" 2 "$command '': exit status"
  expect_contains "$ERR" "DIR is an empty word ('')" "$command '': the empty name"
done
for args in "--bogus which -- a" "--bogus which -n 2 -- a"; do
  # shellcheck disable=SC2086  # (the words of $args, split)
  run_status ks $args
  expect_contains "$ERR" "unknown option '--bogus'" "keyshard $args: the unknown option first"
done
run_status ks resume --
expect_eq "$STATUS" 2 "resume --: exit status"
expect_contains "$ERR" "no DIR: give the output directory of a split" "resume --: DIR is missing"
# The value of an option is no request for help, whatever it spells, with or without a mistake
# elsewhere on the line.
run_status ks split -k -h -o - in.ndjson
expect_eq "$STATUS" 2 "split -k -h without -n: exit status"
expect_contains "$ERR" "no partition count" "split -k -h without -n: -n is missing, no help"
run_status ks which -n -h
expect_eq "$STATUS" 2 "which -n -h: exit status"
expect_contains "$ERR" "--partitions: Value -h is not a whole number" "which -n -h: -h is -n's value"
printf '{"-h":"a"}\n' | ks split -q -k -h -n 3 -o - > keyed.ndjson
expect_eq "$(cat keyed.ndjson)" '{"-h":"a"}' "split -k -h -n 3: the field -h is the key"
pass "a missing option named, with a -- or an option's value that looks like an option"

# Values CLI11 would misread, options given twice or without a value, and suggestions: an
# option is suggested for an option only, a value for a value.
check_usage() {  # EXPECTED-TEXT ARGS...
  local expected=$1
  shift
  run_status ks "$@"
  expect_eq "$STATUS" 2 "keyshard $*: exit status"
  expect_contains "$ERR" "$expected" "keyshard $*: the message"
}
check_usage "--hash= has no value after '='; give one (--hash=VALUE or --hash VALUE)" \
  split -k id -n 2 --hash= -o - in.ndjson
check_usage "-n=8: a short option takes its value after a space (-n 8), not '='" \
  split -k id -n=8 -o - in.ndjson
check_usage "--partitions: given 2 times; give it once" split -k id -n 8 -n 9 -o - in.ndjson
check_usage "--annotate: names no field" split -k id -n 2 --annotate '' -o - in.ndjson
check_usage "--partitions: needs a value" which -n
check_usage "unknown option '--hash' (plan reports on all six partitioners)" \
  plan -k id --hash md5 in.ndjson
check_usage "(plan takes the partition counts as --from N --to M)" plan -k id -n 8 in.ndjson
check_usage "did you mean '--hash'?" which -n 8 --hsh md5 a
check_usage "did you mean 'murmur2'?" which -n 8 --hash mumur2 a
# Two letters swapped are one slip, case is no slip, and a start stands for the whole option.
check_usage "did you mean '--top'?" stats -k id -n 2 --tpo 3 in.ndjson
check_usage "did you mean 'which'?" whcih -n 3 a
check_usage "did you mean '--from'?" plan -k id --form 2 --to 3 in.ndjson
check_usage "did you mean 'md5'?" which -n 3 --hash MD5 a
check_usage "did you mean '--partitions'?" split -k id --part 8 -o - in.ndjson
check_usage "did you mean '--output'?" split -k id -n 2 --out x in.ndjson
# A required option left out is named with what to give.
check_usage "no partition count: give one with -n, e.g. -n 8" split -k id -o - in.ndjson
check_usage "no partition count: give one with -n, e.g. -n 8" which a
check_usage "no --from: give the partition count now" plan -k id --to 3 in.ndjson
check_usage "no DIR: give the output directory of a split" verify
check_usage "no DIR: give the output directory of a split" resume
run_status ks which -n 8 --skip a
[[ "$ERR" != *"did you mean"* ]] || fail "--skip: no value offered for an option: $ERR"
pass "misread values, repeated options, suggestions"

# A long option with one dash: -key would run with the key "ey" (the key path taken for an
# input), -hash would print the help and exit 0 having written nothing.
check_usage "-key: a long option takes two dashes: --key" split -key id -n 2 -o one-dash in.ndjson
check_usage "-hash: a long option takes two dashes: --hash" \
  split -k id -n 2 -hash crc32 -o one-dash in.ndjson
[[ "$ERR" != *"for -h"* ]] || fail "-hash: -h takes no value, so none is offered: $ERR"
[[ ! -e one-dash ]] || fail "a refused one-dash option wrote one-dash/"
check_usage "-hash=md5: a long option takes two dashes: --hash" which -n 8 -hash=md5 a
check_usage "-from: a long option takes two dashes: --from" plan -k id -from 2 --to 3 in.ndjson
# Before the command too; and no hint of a value where the short option takes a number.
check_usage "-hash: a long option takes two dashes: --hash" -hash crc32 which -n 8 a
check_usage "-json: a long option takes two dashes: --json" stats -k id -n 2 -json in.ndjson
# "--" as the value of -k does not end the options for this check, as it does not for CLI11.
check_usage "-hash: a long option takes two dashes: --hash" split -n 2 -o - -k -- -hash in.ndjson
# The word after an option that takes a value is that value, whatever it spells: here the
# field "-key", and a dead-letter file named "-quiet".
printf '{"-key":"a"}\n{"-key":"b"}\n' > dash-field.ndjson
run_status ks split -q -k -key -n 2 -o - --dead-letter -quiet dash-field.ndjson
expect_eq "$STATUS" 0 "-k -key: exit status"
expect_eq "$(echo "$OUT" | sort)" "$(sort dash-field.ndjson)" "-k -key: the field -key is the key"
run_status ks split -qk -key -n 2 -o - dash-field.ndjson  # (-q, then -k and its value)
expect_eq "$(echo "$OUT" | sort)" "$(sort dash-field.ndjson)" "-qk -key: the field -key is the key"
[[ -f ./-quiet ]] || fail "--dead-letter -quiet: the file -quiet was not made"
rm ./-quiet
# -help is a request for the help either way; a word after -- is an input, whatever it spells.
run_status ks split -help
expect_eq "$STATUS" 0 "-help: exit status"
expect_contains "$OUT" "Usage: keyshard split" "-help shows the help"
printf '{"id":"k"}\n' > ./-key
run_status ks split -q -k id -n 2 -o - -- -key
expect_eq "$STATUS" 0 "-- -key: exit status"
expect_eq "$OUT" '{"id":"k"}' "-- -key is read as an input"
rm ./-key
pass "a long option with one dash"

# Standard input at a terminal (no input named): the run says it is reading it (and ends at the
# ^D typed there).
out=$(printf '\004' | timeout 30 script -qc "'$KEYSHARD' split -k id -n 2 -q -o tty-out" /dev/null)
expect_contains "$out" "keyshard: warning: reading events from the terminal: type them and end \
with ^D, or name the input files" "reading the terminal is said"
pass "reading the terminal is said"

# resume and verify name a file given for the directory as such (a usage error).
for command in resume verify; do
  run_status ks "$command" in.ndjson
  expect_eq "$STATUS" 2 "$command FILE: exit status"
  expect_contains "$ERR" "in.ndjson: not a directory: name the output directory (-o DIR)" \
    "$command FILE: the message"
done
pass "resume and verify of a file"

# Input files whose names are in brackets are read under those names.
printf '{"id":"1"}\n' > '[2024-01-01].ndjson'
printf '{"id":"2"}\n' > 'b.ndjson'
printf '{"id":"3"}\n' > '[b.ndjson,c]'
expect_eq "$(ks split -q -k id -n 2 -o - '[2024-01-01].ndjson' '[b.ndjson,c]' b.ndjson | tr -d '\n')" \
  '{"id":"1"}{"id":"3"}{"id":"2"}' "bracketed file names, in order"
run_status ks split -q -k id -n 2 -o - '[missing]'
expect_contains "$ERR" "[missing]: cannot open" "a missing bracketed name is named as given"
pass "file names in brackets"

# A misspelt required option is named as unknown (not "--partitions is required"), and so is
# an unknown option before the command.
run_status ks split -k id --partitons 4 -o - in.ndjson
expect_eq "$STATUS" 2 "a misspelt required option: exit status"
expect_contains "$ERR" "unknown option '--partitons'" "a misspelt required option is named"
expect_contains "$ERR" "did you mean '--partitions'?" "and the right one suggested"
run_status ks --verison
expect_contains "$ERR" "unknown option '--verison'" "an unknown option before any command"
pass "misspelt options are named even when a required one is then missing"

# Limits are shown precisely enough that a value just over one never reads as equal to it; a
# single line is "1 line"; -o - has no checkpoint to speak of; --hot-keys needs two partitions.
printf '{"id":"a"}\n{"id":"a"}\n{"id":"d"}\n' > skewed.ndjson
expect_eq "$(ks which -n 2 a d | tr '\n' ' ')" "0 1 " "a and d in different partitions"
run_status ks split -k id -n 2 --max-skew 1.33 -o skewdir skewed.ndjson
expect_eq "$STATUS" 4 "--max-skew 1.33 with a skew of 4/3"
expect_contains "$ERR" "skew 1.333 (max/mean events per partition) is above --max-skew 1.33" \
  "the skew and the limit differ as shown"
rm -rf skewdir
run_status ks split -k id -n 2 --max-skew 1.33333 -o skewdir skewed.ndjson
expect_contains "$ERR" "skew 1.333333 (max/mean events per partition) is above --max-skew 1.33333" \
  "as many digits as it takes"
rm -rf skewdir
run_status ks split -k id -n 2 --max-skew 1.2345 -o skewdir skewed.ndjson
expect_contains "$ERR" "skew 1.33 (max/mean events per partition) is above --max-skew 1.2345" \
  "the limit as it was given, the skew as the summary shows it"
printf '{"id":"a"}\n%.0s' $(seq 3000) > hot.ndjson
run_status ks split -k id -n 2048 --max-skew 2000 -o - -q hot.ndjson
expect_contains "$ERR" "skew 2048 (max/mean events per partition) is above --max-skew 2000" \
  "no exponent"
printf '{"id":"a"}\nbad\nbad\n' > twobad.ndjson
run_status ks split -k id -n 2 --max-bad 66.66% -o - twobad.ndjson
expect_eq "$STATUS" 3 "--max-bad 66.66% with two bad lines of three"
expect_contains "$ERR" \
  "2 bad lines of 3 (66.7%), more than --max-bad 66.66%; the output is complete" \
  "the share, the limit, and no checkpoint with -o -"
{ printf '{"id":"a"}\n%.0s' $(seq 1000); printf 'bad\n%.0s' $(seq 1200); } > manybad.ndjson
run_status ks split -k id -n 2 --max-bad 1000 -o - -q manybad.ndjson
expect_contains "$ERR" "1,200 bad lines, more than --max-bad 1000" "a count with separators"
run_status ks split -k id -n 2 --max-bad 50% -o - -q manybad.ndjson
expect_contains "$ERR" "1,200 bad lines of 2,200 (54.5%), more than --max-bad 50%" \
  "both counts with separators"
run_status ks split -k id -n 2 -o oneline <(echo '{"id":"a"}')
expect_contains "$ERR" "keyshard: 1 line from 1 input in" "one line"
p=$(ks which -n 2 a)
expect_contains "$ERR" "$(printf '  %5d  %14d event   %16d bytes' "$p" 1 11)" \
  "one event in the partition table"
expect_contains "$ERR" "$(printf '  %5d  %14d events  %16d bytes' $(( 1 - p )) 0 0)" \
  "no events in the partition table"
run_status ks split -k id -n 1 --hot-keys auto -o - skewed.ndjson
expect_eq "$STATUS" 2 "--hot-keys with -n 1"
expect_contains "$ERR" "with -n 1 there is nothing to spread it over" \
  "--hot-keys with -n 1 says why"
pass "limits, plurals and --hot-keys with -n 1"

# Standard streams closed by the caller: no file keyshard opens takes their place (the input
# "-" would read the run's own lock file, say), and reading or writing them is refused first.
printf '{"id":"a"}\n' > one.ndjson
run_status timeout 10 "$KEYSHARD" split -k id -n 2 -o closed-in - <&-
expect_eq "$STATUS" 2 "the input - with standard input closed"
expect_contains "$ERR" "standard input is closed; name the input files" "says so"
[ ! -e closed-in ] || fail "the refused run created its DIR"
for command in "stats -k id -n 2" "plan -k id --from 2 --to 3" "which -n 3"; do
  run_status timeout 10 "$KEYSHARD" $command <&-
  expect_eq "$STATUS" 2 "$command with standard input closed"
  expect_contains "$ERR" "standard input is closed" "$command says so"
done
set +e
timeout 10 "$KEYSHARD" split -k id -n 2 -o - one.ndjson >&- 2> closed-out.err
STATUS=$?
set -e
expect_eq "$STATUS" 2 "-o - with standard output closed"
expect_contains "$(cat closed-out.err)" "-o -: standard output is closed" "says so"
set +e
timeout 10 "$KEYSHARD" split -q -k id -n 2 -o closed-ok one.ndjson <&- >&- 2>&-
STATUS=$?
set -e
expect_eq "$STATUS" 0 "a run that needs none of them"
expect_eq "$(cat closed-ok/part-*.ndjson)" '{"id":"a"}' "and writes its files"
set +e
"$KEYSHARD" stats -k id -n 2 one.ndjson >&- 2> closed-report.err
STATUS=$?
set -e
expect_eq "$STATUS" 1 "a report to a closed standard output is an error, not lost"
pass "closed standard streams"

# A file name with control bytes is shown with escapes: each message stays one line, and no
# escape sequence reaches the terminal.
run_status ks split -q -k id -n 2 -o odd-names $'no\nsuch\e[31m.ndjson'
expect_eq "$STATUS" 1 "a missing input with control bytes in its name"
expect_eq "$(printf '%s\n' "$ERR" | head -n1)" \
  'keyshard: no\nsuch\x1b[31m.ndjson: cannot open: No such file or directory' "the message"
run_status ks split -q -k id -n 2 -o forged $'no\nkeyshard: all good'
expect_eq "$(printf '%s\n' "$ERR" | head -n1)" \
  'keyshard: no\nkeyshard: all good: cannot open: No such file or directory' \
  "a name cannot make a message line of its own"
printf '{"id":"a"}\nnot json\n' > $'tab\tname.ndjson'
run_status ks split -q -k id -n 2 --on-bad fail -o - $'tab\tname.ndjson'
expect_eq "$STATUS" 65 "a bad line in a file with a tab in its name"
expect_eq "$ERR" 'keyshard: tab\tname.ndjson:2: invalid_json: invalid literal (--on-bad fail)' \
  "the message names the file and line on one line"
rm -rf odd-inc && ks split -q --incremental -k id -n 2 -o odd-inc $'tab\tname.ndjson' \
  $'tab\tname.ndjson' $'tab\tname.ndjson' 2> odd-inc.err
expect_eq "$(cat odd-inc.err)" 'keyshard: warning: tab\tname.ndjson: named twice; read once' \
  "a warning, once however often the file is named"
# C1 controls too: U+009B (CSI to some terminals) and a lone byte 0x9b; not the byte 0x9b that
# ends a character (U+011B, \xc4\x9b).
run_status ks split -q -k id -n 2 -o - "$(printf 'a\xc2\x9bb\x9bc\xc4\x9b.ndjson')"
expect_eq "$ERR" "$(printf '%s' 'keyshard: a\xc2\x9bb\x9bc'; printf '\xc4\x9b'; \
  printf '%s' '.ndjson: cannot open: No such file or directory')" "C1 controls as escapes"
pass "control bytes in file names are shown as escapes"

# ... and in the values of options, and in unknown options, that a usage error shows.
run_status ks which -n 2 --hash $'x\ty\e[31m' a
expect_eq "$STATUS" 2 "an unknown --hash"
expect_contains "$ERR" 'keyshard: --hash: x\ty\x1b[31m not in' "its control bytes escaped"
run_status ks split $'--b\e[1m' -k id -n 2 -o - ann.ndjson
expect_contains "$ERR" "keyshard: unknown option '--b\\x1b[1m'" "an unknown option's"
[[ "$ERR" != *$'\e'* ]] || fail "no escape byte reaches the terminal"
pass "control bytes in option values are shown as escapes"

# Standard input named twice would be read once, the second time as empty: refused.
for command in "split -k id -n 2 -o -" "stats -k id -n 2" "plan -k id --from 2 --to 3"; do
  run_status bash -c 'echo "{\"id\":1}" | "$0" '"$command"' - -' "$KEYSHARD"
  expect_eq "$STATUS" 2 "$command - -"
  expect_contains "$ERR" "standard input) is named more than once" "the reason ($command)"
done
pass "standard input named twice"

# A file named twice (as given, under another name, or by a link) is read each time, as cat
# would: a warning says so, once a file; --incremental reads it once (tested above).
printf '{"id":1}\n' > twice.ndjson
ln -sf twice.ndjson twice-link.ndjson
for command in "split -k id -n 2 -o -" "stats -k id -n 2" "plan -k id --from 2 --to 3"; do
  run_status ks $command twice.ndjson ./twice.ndjson twice-link.ndjson twice.ndjson
  expect_eq "$STATUS" 0 "$command: a file named twice"
  expect_eq "$(grep -c 'named twice' <<< "$ERR")" 1 "$command: one warning"
  expect_contains "$ERR" "warning: ./twice.ndjson: named twice (also as twice.ndjson); it is \
read each time, so its events count twice over" "$command: the warning"
done
run_status ks split -k id -n 2 -o - twice.ndjson twice-link.ndjson
expect_eq "$OUT" "$(printf '{"id":1}\n{"id":1}')" "read each time"
# Standard input redirected from a file named too is that file named twice (not from a pipe).
run_status ks split -k id -n 2 -o - twice.ndjson - < twice.ndjson
expect_contains "$ERR" "warning: - (standard input): named twice (also as twice.ndjson)" \
  "standard input from a file named too"
expect_eq "$OUT" "$(printf '{"id":1}\n{"id":1}')" "standard input from a file named too: read again"
run_status ks split -k id -n 2 -o - - /dev/stdin < twice.ndjson
expect_contains "$ERR" "warning: /dev/stdin: named twice (also as - (standard input))" \
  "standard input named again as /dev/stdin"
run_status ks split -k id -n 2 -o - twice.ndjson - < <(cat twice.ndjson)
[[ "$ERR" != *"named twice"* ]] || fail "standard input from a pipe is no file named twice"
pass "a file named twice"

# SIMDJSON_FORCE_IMPLEMENTATION naming no kernel (or empty) leaves simdjson none: every JSON
# line would be a bad line, and no checkpoint could be read. Refused before anything is done,
# naming the kernels this CPU runs; one of those is used as named.
printf '{"id":1}\n{"id":2}\n' > kernel.ndjson
for value in "" bogus; do
  for command in "split -k id -n 2 -o kernel-out" "stats -k id -n 2" "which -n 2 a"; do
    rm -rf kernel-out
    run_status env SIMDJSON_FORCE_IMPLEMENTATION="$value" "$KEYSHARD" $command kernel.ndjson
    expect_eq "$STATUS" 2 "SIMDJSON_FORCE_IMPLEMENTATION='$value' $command"
    expect_contains "$ERR" "keyshard: SIMDJSON_FORCE_IMPLEMENTATION is '$value', which names no kernel simdjson has: use one of " \
      "the message ($value, $command)"
    expect_contains "$ERR" "fallback, or unset it" "the portable kernel is always named"
    [ ! -e kernel-out ] || fail "SIMDJSON_FORCE_IMPLEMENTATION='$value': kernel-out was created"
  done
done
expected=$(ks split -q -k id -n 2 -o - kernel.ndjson)
run_status env SIMDJSON_FORCE_IMPLEMENTATION=fallback "$KEYSHARD" split -q -k id -n 2 -o - kernel.ndjson
expect_eq "$STATUS" 0 "SIMDJSON_FORCE_IMPLEMENTATION=fallback"
expect_eq "$OUT" "$expected" "the portable kernel's output"
pass "SIMDJSON_FORCE_IMPLEMENTATION naming no kernel is refused"
