#!/usr/bin/env bash
# bench/run.sh BUILD_DIR: keyshard's throughput against the I/O ceiling and its peers (mawk,
# GNU parallel, Python, Miller) on the same generated data. Each contender runs BENCH_RUNS times;
# the table shows the median wall time as MB/s and events/s, and the ratio to `keyshard -n 8`.
# A contender that is missing or fails becomes an "n/a" row; the bench goes on. See README.md.
set -uo pipefail

if [[ $# -ne 1 || $1 == -h || $1 == --help ]]; then
  echo "usage: bench/run.sh BUILD_DIR   (env: BENCH_SIZE=1GiB, BENCH_RUNS=3, BENCH_RUN_LIMIT=300)" >&2
  exit 2
fi

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root_dir=$(dirname "$bench_dir")
build_dir=$(realpath -m "$1")
[[ $build_dir == "$root_dir"/* ]] && build_dir=${build_dir#"$root_dir"/}  # shorter commands
cd "$root_dir" || exit 1

data_dir=bench/data
out_dir=$data_dir/out
results_dir=bench/results
gen_events=$build_dir/bench/gen_events
keyshard=$build_dir/src/keyshard
runs=${BENCH_RUNS:-3}
run_limit=${BENCH_RUN_LIMIT:-300}  # seconds; a run that takes longer is stopped (a hung peer)
size_spec=${BENCH_SIZE:-1GiB}
seed=1
parts=8

# Slow peers run on a prefix of the data (the generator makes prefixes: a shorter run of the
# same seed is byte for byte the start of a longer one). Never more than the whole file.
python_slice=256MiB
parallel_slice=256MiB
miller_slice=64MiB

die() { echo "bench/run.sh: $*" >&2; exit 1; }
log() { echo "[bench] $*" >&2; }

# "1GiB", "512M", "32MiB", "1000000" -> bytes.
to_bytes() {
  local spec=$1 number unit
  [[ $spec =~ ^([0-9]+)(K|KiB|M|MiB|G|GiB)?$ ]] || die "bad size '$spec' (e.g. 1GiB, 32MiB)"
  number=${BASH_REMATCH[1]} unit=${BASH_REMATCH[2]}
  case $unit in
    K|KiB) echo $((number << 10)) ;;
    M|MiB) echo $((number << 20)) ;;
    G|GiB) echo $((number << 30)) ;;
    *) echo "$number" ;;
  esac
}

human_size() {  # bytes -> "1.0 GiB" / "64 MiB"
  awk -v b="$1" 'BEGIN {
    if (b >= 2^30) printf "%.3g GiB", b / 2^30
    else if (b >= 2^20) printf "%.3g MiB", b / 2^20
    else printf "%d B", b }'
}

# ---------------------------------------------------------------------------------------------
# Data: generated once and cached in bench/data/. A stamp beside each file records the seed,
# the size and a fingerprint of the generator's output, so a changed generator regenerates.

[[ -x $gen_events ]] || die "$gen_events not found; build first (meson compile -C $build_dir)"
total_bytes=$(to_bytes "$size_spec")
mkdir -p "$data_dir" "$results_dir"
generator_fingerprint=$("$gen_events" --events 20000 --seed "$seed" | sha256sum | cut -c1-16)

# ensure_events FILE BYTES: (re)generates FILE unless its stamp matches.
ensure_events() {
  local file=$1 bytes=$2
  local stamp="seed=$seed bytes=$bytes generator=$generator_fingerprint"
  if [[ -f $file && -f $file.stamp && $(head -n1 "$file.stamp") == "$stamp" ]]; then
    return 0
  fi
  log "generating $file: $gen_events --bytes $bytes --seed $seed"
  "$gen_events" --bytes "$bytes" --seed "$seed" > "$file.tmp" || die "gen_events failed"
  mv "$file.tmp" "$file"
  { echo "$stamp"; wc -l < "$file"; } > "$file.stamp"
  rm -f "$file.zst"
}

file_lines() { sed -n 2p "$1.stamp"; }
file_bytes() { stat -c %s "$1"; }

events_file=$data_dir/events.ndjson
ensure_events "$events_file" "$total_bytes"
if [[ ! -f $events_file.zst ]]; then
  if command -v zstd > /dev/null; then
    log "compressing: zstd -3 -T0 $events_file"
    zstd -q -3 -T0 -f "$events_file" -o "$events_file.zst.tmp" && mv "$events_file.zst.tmp" "$events_file.zst"
  else
    log "zstd not installed: the .zst rows will be n/a"
  fi
fi

# slice_for SIZE: the file holding the first SIZE bytes (whole lines) of the events.
slice_for() {
  local bytes
  bytes=$(to_bytes "$1")
  if (( bytes >= total_bytes )); then
    echo "$events_file"
    return
  fi
  local file=$data_dir/slice-$1.ndjson
  ensure_events "$file" "$bytes" >&2
  echo "$file"
}

python_input=$(slice_for $python_slice)
parallel_input=$(slice_for $parallel_slice)
miller_input=$(slice_for $miller_slice)

# ---------------------------------------------------------------------------------------------
# Measuring. Every run starts from an empty output directory and a synced disk, with its input
# in the page cache. Wall time comes from the monotonic-enough nanosecond clock around
# /usr/bin/time, which reports the peak RSS (%M, KiB) of the command and its children, and their
# user and system CPU time (%U, %S).

scratch_dir=$(mktemp -d)
aside_dir=$data_dir/aside
rm -rf "$aside_dir"
shm_out_dir=
trap 'rm -rf "$scratch_dir" "$aside_dir" ${shm_out_dir:+"$shm_out_dir"}' EXIT
free_gib() { df -P -BG "$data_dir" | awk 'NR == 2 { print $4 + 0 }'; }
row_name=() row_input=() row_mbs=() row_meps=() row_rss=() row_ratio=() row_cmd=() row_note=()
row_cpu=() row_cores=()

# count_output_lines: lines in the partition files (part-*, copy.*) of $out_dir, .zst decoded.
count_output_lines() {
  local file total=0 n
  shopt -s nullglob
  for file in "$out_dir"/part-* "$out_dir"/copy.*; do
    if [[ $file == *.zst ]]; then n=$(zstd -dcq "$file" | wc -l); else n=$(wc -l < "$file"); fi
    total=$((total + n))
  done
  shopt -u nullglob
  echo "$total"
}

# median of numbers on stdin (mean of the middle two for an even count)
median() {
  sort -g | awk '{ v[NR] = $1 } END {
    if (NR % 2) printf "%.6f", v[(NR + 1) / 2]
    else printf "%.6f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# move_aside NAME: moves OUT (the last run's outputs) to $aside_dir/NAME while the disk has 16 GiB
# free, and releases the page cache holding those files, as deleting them would (see "The
# filesystem matters" in bench/README.md): the next run then finds memory as after a deletion, and
# does not pay for memory its VM has never touched.
move_aside() {
  [[ -d $out_dir && $(free_gib) -ge 16 ]] || return 0
  mkdir -p "$aside_dir"
  mv "$out_dir" "$aside_dir/$1"
  sync
  python3 "$bench_dir/release_page_cache.py" "$aside_dir/$1"
}

# add_row NAME INPUT_LABEL COMMAND: a new row of the table, n/a until measured.
add_row() {
  local index=${#row_name[@]}
  row_name[index]=$1 row_input[index]=$2 row_cmd[index]=$3
  row_mbs[index]=n/a row_meps[index]=n/a row_rss[index]=n/a row_ratio[index]=n/a
  row_cpu[index]=n/a row_cores[index]=n/a
  row_note[index]=""
}

# contender NAME INPUT_FILE INPUT_LABEL CHECK REQUIRES COMMAND [aside]
#   CHECK: "lines" compares the lines written to part-*/copy.* with the input's; "none" skips.
#   REQUIRES: an executable that must exist, else the row is n/a.
#   COMMAND: one shell command line, run from the repository root, shown verbatim in the table.
#   aside: the outputs of each run are moved aside rather than deleted (rows that write many
#     files; see "The filesystem matters" in bench/README.md); they are deleted at the end.
contender() {
  local name=$1 input=$2 label=$3 check=$4 requires=$5 command=$6 aside=${7:-}
  local index=${#row_name[@]}
  local stats_input=${input%.zst}
  add_row "$name" "$label" "$command"

  log "$name: $command"
  if ! command -v "$requires" > /dev/null 2>&1; then
    row_note[index]="not available: $requires"
    log "  n/a: $requires not found"
    return
  fi
  if [[ ! -f $input ]]; then
    row_note[index]="input $input missing"
    log "  n/a: input $input missing"
    return
  fi

  cat "$input" > /dev/null  # warm the page cache
  local run times=() cpu_times=() rss_max=0
  local time_file=$scratch_dir/time stderr_file=$scratch_dir/stderr
  for ((run = 1; run <= runs; run++)); do
    [[ $aside == aside ]] && move_aside "$index-$run"
    rm -rf "$out_dir"
    mkdir -p "$out_dir"
    sync
    local start end status
    start=$(date +%s%N)
    # (timeout signals the run's whole process group: a peer's children too)
    timeout -k 10 "$run_limit" /usr/bin/time -f '%e %M %U %S' -o "$time_file" bash -c "$command" \
      > /dev/null 2> "$stderr_file"
    status=$?
    end=$(date +%s%N)
    if ((status != 0)); then
      local reason
      reason=$(grep -v '^\s*$' "$stderr_file" | head -n1 | cut -c1-120)
      if ((status == 124 || status == 137)); then
        reason="run $run stopped after ${run_limit} s (BENCH_RUN_LIMIT)"
      fi
      row_note[index]="exit $status${reason:+: $reason}"
      log "  n/a: ${row_note[index]}"
      rm -rf "$out_dir"
      return
    fi
    local rss
    rss=$(tail -n1 "$time_file" | awk '{ print $2 }')
    ((rss > rss_max)) && rss_max=$rss
    times+=("$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.6f", (e - s) / 1e9 }')")
    cpu_times+=("$(tail -n1 "$time_file" | awk '{ printf "%.2f", $3 + $4 }')")
    log "  run $run: ${times[-1]} s, peak RSS $((rss / 1024)) MiB"
  done

  if [[ $check == lines ]]; then
    local written expected
    written=$(count_output_lines)
    expected=$(file_lines "$stats_input")
    if [[ $written != "$expected" ]]; then
      row_note[index]="wrote $written lines of $expected"
      log "  warning: ${row_note[index]}"
    fi
  fi
  rm -rf "$out_dir"

  local seconds bytes lines
  seconds=$(printf '%s\n' "${times[@]}" | median)
  bytes=$(file_bytes "$stats_input")
  lines=$(file_lines "$stats_input")
  row_mbs[index]=$(awk -v b="$bytes" -v s="$seconds" 'BEGIN { printf "%.1f", b / 1e6 / s }')
  row_meps[index]=$(awk -v l="$lines" -v s="$seconds" 'BEGIN { printf "%.2f", l / 1e6 / s }')
  row_rss[index]=$(awk -v k="$rss_max" 'BEGIN { printf "%.1f", k / 1024 }')
  local cpu
  cpu=$(printf '%s\n' "${cpu_times[@]}" | median)
  row_cpu[index]=$(awk -v c="$cpu" -v b="$bytes" 'BEGIN { printf "%.2f", c / (b / 1e9) }')
  row_cores[index]=$(awk -v c="$cpu" -v s="$seconds" 'BEGIN { printf "%.2f", c / s }')
}

# unavailable NAME INPUT_LABEL REASON: an n/a row for a contender that cannot run here.
unavailable() {
  add_row "$1" "$2" "(not run: $3)"
  row_note[-1]=$3
  log "$1: n/a: $3"
}

# ---------------------------------------------------------------------------------------------
# The contenders. Commands are plain text so readers can paste them; OUT is $out_dir.

full_label="events.ndjson ($(human_size "$(file_bytes "$events_file")"))"
label_of() {  # file -> table label
  if [[ $1 == "$events_file" ]]; then echo "$full_label"
  else echo "first $(human_size "$(file_bytes "$1")") (slice)"; fi
}
zst_file=$events_file.zst
zst_label="events.ndjson.zst ($(human_size "$(file_bytes "$zst_file" 2> /dev/null || echo 0)") → $(human_size "$(file_bytes "$events_file")"))"
split() { echo "$keyshard split -k user_id -n $1 -o $out_dir --force -q ${*:2}"; }

contender "cat (I/O ceiling)" "$events_file" "$full_label" lines cat \
  "cat $events_file > $out_dir/copy.ndjson"
contender "dd conv=fsync (durable I/O ceiling)" "$events_file" "$full_label" lines dd \
  "dd if=$events_file of=$out_dir/copy.ndjson bs=1M conv=fsync status=none"
contender "keyshard -n $parts" "$events_file" "$full_label" lines "$keyshard" \
  "$(split $parts "$events_file")"
headline=$(( ${#row_name[@]} - 1 ))
# The peers leave their files in the page cache, as cat does; this row does the same (its
# checkpoints are still written, the outputs not fsynced), so its ratios to them compare like
# with like, whatever the disk's speed that day.
contender "keyshard -n $parts --commit async" "$events_file" "$full_label" lines "$keyshard" \
  "$(split $parts --commit async "$events_file")"
headline_async=$(( ${#row_name[@]} - 1 ))
contender "keyshard -n 1024" "$events_file" "$full_label" lines "$keyshard" \
  "$(split 1024 "$events_file")" aside
disk_1024=$(( ${#row_name[@]} - 1 ))
contender "keyshard -n 1024 --commit async" "$events_file" "$full_label" lines "$keyshard" \
  "$(split 1024 --commit async "$events_file")" aside
rm -rf "$aside_dir"

# The same two splits into tmpfs (memory; /dev/shm): what the pipeline itself keeps at -n 1024
# once the disk is out of the picture. Skipped, as n/a rows, without a tmpfs /dev/shm with room
# for twice the input.
shm_out_dir=/dev/shm/keyshard-bench-$$
tmpfs_parts=${#row_name[@]} tmpfs_1024=$(( ${#row_name[@]} + 1 ))  # the two rows' indexes
shm_free=$(df -P -B1 /dev/shm 2> /dev/null | awk 'NR == 2 { print $4 }')
if [[ $(stat -f -c %T /dev/shm 2> /dev/null) == tmpfs ]] &&
   (( ${shm_free:-0} >= 2 * $(file_bytes "$events_file") )); then
  disk_out_dir=$out_dir
  out_dir=$shm_out_dir
  contender "keyshard -n $parts, OUT on tmpfs" "$events_file" "$full_label" lines "$keyshard" \
    "$(split $parts "$events_file")"
  contender "keyshard -n 1024, OUT on tmpfs" "$events_file" "$full_label" lines "$keyshard" \
    "$(split 1024 "$events_file")"
  rm -rf "$shm_out_dir"
  out_dir=$disk_out_dir
else
  no_tmpfs="no tmpfs /dev/shm with $(human_size $((2 * $(file_bytes "$events_file")))) free"
  unavailable "keyshard -n $parts, OUT on tmpfs" "$full_label" "$no_tmpfs"
  unavailable "keyshard -n 1024, OUT on tmpfs" "$full_label" "$no_tmpfs"
fi
contender "keyshard -n $parts --no-validate" "$events_file" "$full_label" lines "$keyshard" \
  "$(split $parts --no-validate "$events_file")"
contender "keyshard -n $parts --compress zstd:1" "$events_file" "$full_label" lines "$keyshard" \
  "$(split $parts --compress zstd:1 "$events_file")"
contender "zstd -dc (decompression ceiling)" "$zst_file" "$zst_label" none zstd \
  "zstd -dc $zst_file > /dev/null"
contender "keyshard -n $parts, zstd input" "$zst_file" "$zst_label" lines "$keyshard" \
  "$(split $parts "$zst_file")"
contender "keyshard stats -n $parts (dry run)" "$events_file" "$full_label" none "$keyshard" \
  "$keyshard stats -k user_id -n $parts $events_file > /dev/null"
contender "keyshard -n $parts --hot-keys auto" "$events_file" "$full_label" lines "$keyshard" \
  "$(split $parts --hot-keys auto "$events_file")"
contender "keyshard -n $parts --exec cat" "$events_file" "$full_label" lines "$keyshard" \
  "$(split $parts --exec cat "$events_file")"
contender "mawk (regex + awk hash)" "$events_file" "$full_label" lines mawk \
  "mawk -v out=$out_dir -v parts=$parts -f bench/peers/route_by_key.awk $events_file"
contender "GNU parallel --shard" "$parallel_input" "$(label_of "$parallel_input")" lines parallel \
  "parallel --pipe --shard '2 s/\".*//' --colsep '\"user_id\":\"' -j$parts 'cat > $out_dir/part-{%}' < $parallel_input"
contender "Python json + md5" "$python_input" "$(label_of "$python_input")" lines python3 \
  "python3 bench/peers/route_by_key.py $out_dir $parts $python_input"
contender "Miller 6 (mlr)" "$miller_input" "$(label_of "$miller_input")" lines mlr \
  "mlr --ijsonl --ojsonl put -q 'tee > \"$out_dir/part-\" . (int(\"0x\" . substr0(md5(\$user_id), 31, 31)) % $parts) . \".ndjson\", \$*' $miller_input"

# ---------------------------------------------------------------------------------------------
# Side by side: ratios between keyshard runs measured in the same rounds. Each round runs every
# variant in turn, starting with a different one each round, so that a noisy neighbour, the disk's
# state or the order of runs favours none of them (the table's rows run minutes apart).

# side_by_side ROUNDS delete|aside OPTIONS...: one `keyshard split` per OPTIONS (a string of
# options) per round, on the whole events file into OUT on the disk. Sets side_seconds[OPTIONS]
# to the median wall time (n/a when a run failed) and side_runs[OPTIONS] to the wall times of
# its runs, in round order. With aside, each run's outputs are moved aside
# (as for the table's rows that write many files) and deleted at the end.
share() {  # MB/s, MB/s of the baseline -> "52%" or "n/a"
  if [[ $1 == n/a || $2 == n/a ]]; then echo "n/a"
  else awk -v x="$1" -v b="$2" 'BEGIN { printf "%.0f%%", 100 * x / b }'; fi
}

declare -A side_seconds=() side_runs=()
side_by_side() {
  local rounds=$1 disposal=$2 round turn options start end
  shift 2
  local variants=("$@")
  local -A round_times=() failed=()
  cat "$events_file" > /dev/null
  for ((round = 1; round <= rounds; round++)); do
    for ((turn = 0; turn < ${#variants[@]}; turn++)); do
      options=${variants[(round + turn) % ${#variants[@]}]}
      [[ $disposal == aside ]] && move_aside "side-$round-$turn"
      rm -rf "$out_dir"; mkdir -p "$out_dir"; sync
      start=$(date +%s%N)
      # shellcheck disable=SC2086  # several options
      if ! "$keyshard" split -k user_id -o "$out_dir" --force -q $options "$events_file"; then
        log "side by side: $options failed"
        failed[$options]=1
      fi
      end=$(date +%s%N)
      round_times[$options]+="$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.6f", (e - s) / 1e9 }') "
      log "side by side ($options), round $round: $(( (end - start) / 1000000 )) ms"
    done
  done
  rm -rf "$out_dir" "$aside_dir"
  for options in "${variants[@]}"; do
    if [[ -n ${failed[$options]:-} ]]; then side_seconds[$options]=n/a; continue; fi
    side_runs[$options]=${round_times[$options]}
    # shellcheck disable=SC2086  # the times, one word each
    side_seconds[$options]=$(printf '%s\n' ${round_times[$options]} | median)
  done
}

side_mbs() {  # OPTIONS -> MB/s of its median, or n/a
  local seconds=${side_seconds[$1]:-n/a}
  if [[ $seconds == n/a ]]; then echo n/a; return; fi
  awk -v s="$seconds" -v b="$(file_bytes "$events_file")" 'BEGIN { printf "%.1f", b / 1e6 / s }'
}

# The cost of checkpoints: the same split without periodic checkpoints (only the start and the
# end), with one every 64 MiB, and with the default (auto: every 64 MiB, half a second apart at
# least), all under --commit sync (the default); then the last two under --commit async.
checkpoint_report=()
checkpoint_rounds=${BENCH_CHECKPOINT_ROUNDS:-5}
if [[ -x $keyshard ]]; then
  checkpoint_modes=("--checkpoint-every off" "--checkpoint-every 64MiB" "--checkpoint-every auto"
                    "--checkpoint-every off --commit async" "--checkpoint-every auto --commit async")
  side_by_side "$checkpoint_rounds" delete "${checkpoint_modes[@]/#/-n $parts }"
  base=$(side_mbs "-n $parts ${checkpoint_modes[0]}")
  for mode in "${checkpoint_modes[@]}"; do
    mbs=$(side_mbs "-n $parts $mode")
    checkpoint_report+=("| keyshard -n $parts $mode | $mbs | $(awk -v x="$mbs" -v b="$base" \
      'BEGIN { if (x == "n/a" || b == "n/a") print "n/a"; else printf "%.3f", x / b }') |")
  done
fi

# Resizing: -n 1024 against -n 8 on the disk, with the defaults. Each round gives a share (the
# two runs of a round meet the same disk); the median of the rounds' shares, and each of them.
resize_rounds=${BENCH_RESIZE_ROUNDS:-5}
resize_share=n/a
if [[ -x $keyshard ]]; then
  side_by_side "$resize_rounds" aside "-n $parts" "-n 1024"
  if [[ ${side_seconds["-n 1024"]} != n/a && ${side_seconds["-n $parts"]} != n/a ]]; then
    shares=$(paste -d' ' <(printf '%s\n' ${side_runs["-n $parts"]}) \
                         <(printf '%s\n' ${side_runs["-n 1024"]}) |
             awk '{ printf "%.6f\n", 100 * $1 / $2 }')
    resize_share="$(printf '%s\n' "$shares" | median | awk '{ printf "%.0f%%", $1 }')"
    resize_share+=" (rounds:$(printf '%s\n' "$shares" | awk '{ printf " %.0f%%", $1 }');"
    # A disk that slows down part-way shows here: the same split taking far longer.
    resize_share+=" -n $parts took $(printf '%s\n' ${side_runs["-n $parts"]} | sort -g |
      awk 'NR == 1 { low = $1 } { high = $1 } END { printf "%.2f to %.2f s", low, high }'))"
  fi
fi

# Making the files: -n 1024 creates 1,024 of them, and some filesystems make that cost more than
# the writes (ext4 without a journal searches its inode table for each new inode), and how much
# depends on where the filesystem puts the directory. The median over rounds of `touch` creating
# 1,024 empty files in OUT, made anew each round as for the runs above (the last round's files
# moved aside while there is room).
create_report=n/a
if ((resize_rounds > 0)); then
  create_runs=()
  for ((round = 1; round <= resize_rounds; round++)); do
    move_aside "create-$round"
    rm -rf "$out_dir"; mkdir -p "$out_dir"; sync
    start=$(date +%s%N)
    (cd "$out_dir" && touch part-{00000..01023}.ndjson)
    end=$(date +%s%N)
    create_runs+=("$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.6f", (e - s) / 1e9 }')")
    log "creating 1024 files, round $round: $(( (end - start) / 1000000 )) ms"
  done
  rm -rf "$out_dir" "$aside_dir"
  create_seconds=$(printf '%s\n' "${create_runs[@]}" | median)
  create_report="$(awk -v s="$create_seconds" 'BEGIN { printf "%.2f s", s }') (rounds:"
  create_report+="$(printf '%s\n' "${create_runs[@]}" | awk '{ printf " %.2f", $1 }') s)"
  if [[ ${side_seconds["-n 1024"]:-n/a} != n/a ]]; then
    create_report+=", against $(awk -v s="${side_seconds["-n 1024"]}" 'BEGIN { printf "%.2f s", s }')"
    create_report+=" for the median -n 1024 run above"
  fi
fi

# ---------------------------------------------------------------------------------------------
# Per-key order: keyshard --exec cat against GNU parallel --shard (each job a cat), on the
# slice parallel runs on.

order_report=()
if [[ -x $keyshard ]] && command -v parallel > /dev/null; then
  rm -rf "$out_dir"; mkdir -p "$out_dir"
  "$keyshard" split -k user_id -n "$parts" -o "$out_dir" --force -q --exec cat "$parallel_input"
  order_report+=("keyshard --exec cat: $(python3 bench/check_key_order.py "$parallel_input" "$out_dir"/part-*)")
  rm -rf "$out_dir"; mkdir -p "$out_dir"
  if timeout -k 10 "$run_limit" parallel --pipe --shard '2 s/".*//' --colsep '"user_id":"' \
      -j"$parts" "cat > $out_dir/part-{%}" < "$parallel_input"; then
    order_report+=("GNU parallel --shard: $(python3 bench/check_key_order.py "$parallel_input" "$out_dir"/part-*)")
  else
    order_report+=("GNU parallel --shard: n/a (failed, or stopped after ${run_limit} s)")
  fi
  rm -rf "$out_dir"
  for line in "${order_report[@]}"; do log "order: $line"; done
fi

# ---------------------------------------------------------------------------------------------
# The table: printed and written to bench/results/latest.md.

headline_mbs=${row_mbs[headline]}
for i in "${!row_name[@]}"; do
  if [[ ${row_mbs[i]} == n/a ]]; then
    row_ratio[i]="n/a${row_note[i]:+ (${row_note[i]})}"
  elif ((i == headline)); then
    row_ratio[i]="baseline"
  elif [[ $headline_mbs == n/a ]]; then
    row_ratio[i]="n/a (no baseline)"
  else
    row_ratio[i]=$(awk -v k="$headline_mbs" -v x="${row_mbs[i]}" 'BEGIN {
      if (k / x < 1.05 && x / k < 1.05) printf "same speed (within 5%%)"
      else if (k >= x) printf "keyshard is %.1fx faster", k / x
      else printf "%.1fx faster than keyshard", x / k }')
  fi
  if [[ ${row_mbs[i]} != n/a && -n ${row_note[i]} ]]; then
    row_ratio[i]+=" ⚠ ${row_note[i]}"
  fi
done

# ---------------------------------------------------------------------------------------------
# The targets (bench/README.md, "The targets"), each against this run's figures: for the
# defaults (--commit sync: every output byte on the disk before the run ends) and for
# --commit async (the outputs left in the page cache, as the peers and cat leave theirs).

row_named() {  # NAME -> its row's index, or -1
  local i
  for i in "${!row_name[@]}"; do
    if [[ ${row_name[i]} == "$1" ]]; then echo "$i"; return; fi
  done
  echo -1
}
mbs_of() { if (($1 < 0)); then echo n/a; else echo "${row_mbs[$1]}"; fi; }
# judge VALUE OP BOUND TEXT: "TEXT, met" or "TEXT, not met" (n/a when VALUE is)
judge() {
  if [[ $1 == n/a ]]; then echo "n/a"; return; fi
  awk -v v="$1" -v b="$3" -v op="$2" -v t="$4" \
    'BEGIN { ok = (op == ">=") ? v >= b : v <= b; printf "%s, %s", t, ok ? "met" : "not met" }'
}
times_over() {  # KEYSHARD_MBS PEER_MBS -> "12.3" or n/a
  if [[ $1 == n/a || $2 == n/a ]]; then echo n/a
  else awk -v k="$1" -v p="$2" 'BEGIN { printf "%.1f", k / p }'; fi
}
share_of() {  # MBS BASE_MBS -> "61" (percent) or n/a
  if [[ $1 == n/a || $2 == n/a ]]; then echo n/a
  else awk -v x="$1" -v b="$2" 'BEGIN { printf "%.0f", 100 * x / b }'; fi
}
target_rows=()
sync_mbs=$(mbs_of "$headline") async_mbs=$(mbs_of "$headline_async")
# Under --commit sync, the disk's durable speed bounds the headline: where even dd conv=fsync
# ran slower than the target, the cell says so.
durable_mbs=$(mbs_of "$(row_named "dd conv=fsync (durable I/O ceiling)")")
sync_judged=$(judge "$sync_mbs" ">=" 1500 "$sync_mbs MB/s")
if [[ $durable_mbs != n/a ]] && awk -v d="$durable_mbs" 'BEGIN { exit !(d < 1500) }'; then
  sync_judged+=" (this disk's durable ceiling, dd conv=fsync: $durable_mbs MB/s)"
fi
target_rows+=("| ≥ 1,500 MB/s into $parts files | $sync_judged |\
 $(judge "$async_mbs" ">=" 1500 "$async_mbs MB/s") |")
for peer in "mawk (regex + awk hash):10" "GNU parallel --shard:20" "Miller 6 (mlr):80"; do
  name=${peer%:*} bound=${peer##*:}
  peer_mbs=$(mbs_of "$(row_named "$name")")
  x_sync=$(times_over "$sync_mbs" "$peer_mbs") x_async=$(times_over "$async_mbs" "$peer_mbs")
  target_rows+=("| ≥ ${bound}× ${name%% (*} ($peer_mbs MB/s) | $(judge "$x_sync" ">=" "$bound" "${x_sync}×") |\
 $(judge "$x_async" ">=" "$bound" "${x_async}×") |")
done
s_rows=$(share_of "$(mbs_of "$disk_1024")" "$sync_mbs")
s_async=$(share_of "$(mbs_of "$(row_named "keyshard -n 1024 --commit async")")" "$async_mbs")
s_side=${resize_share%%\%*}
target_rows+=("| \`-n 1024\` ≥ 60% of \`-n $parts\` | $(judge "$s_rows" ">=" 60 "$s_rows% in the rows");\
 $(judge "$s_side" ">=" 60 "$s_side% side by side") | $(judge "$s_async" ">=" 60 "$s_async%") |")
rss_max=n/a
for i in "${!row_name[@]}"; do
  if [[ ${row_name[i]} == keyshard* && ${row_rss[i]} != n/a ]]; then
    rss_max=$(awk -v a="$rss_max" -v b="${row_rss[i]}" 'BEGIN { print (a == "n/a" || b > a) ? b : a }')
  fi
done
target_rows+=("| peak RSS ≤ 256 MiB (any keyshard row) | $(judge "$rss_max" "<=" 256 "$rss_max MiB") | |")
zstd_share=n/a
zstd_in=$(mbs_of "$(row_named "keyshard -n $parts, zstd input")")
zstd_dc=$(mbs_of "$(row_named "zstd -dc (decompression ceiling)")")
if [[ $zstd_in != n/a && $zstd_dc != n/a ]]; then
  zstd_share=$(awk -v k="$zstd_in" -v z="$zstd_dc" 'BEGIN { printf "%.2f", k / z }')
fi
zstd_judged=$(judge "$zstd_share" ">=" 0.8 "${zstd_share}×")
# The zstd row writes its outputs durably too: where 0.8× zstd -dc is more than even dd
# conv=fsync wrote, the disk rules the target out, and the cell says so.
if [[ $zstd_share != n/a && $durable_mbs != n/a ]]; then
  zstd_needed=$(awk -v z="$zstd_dc" 'BEGIN { printf "%.1f", 0.8 * z }')
  if awk -v n="$zstd_needed" -v d="$durable_mbs" 'BEGIN { exit !(n > d) }'; then
    zstd_judged+=" (0.8× is $zstd_needed MB/s, above this disk's durable ceiling, dd conv=fsync: $durable_mbs MB/s)"
  fi
fi
target_rows+=("| zstd input ≥ 0.8× \`zstd -dc\` | $zstd_judged | |")
compress_mbs=$(mbs_of "$(row_named "keyshard -n $parts --compress zstd:1")")
target_rows+=("| \`--compress zstd:1\` ≥ 500 MB/s | $(judge "$compress_mbs" ">=" 500 "$compress_mbs MB/s") | |")

# free_page_reporting: whether this VM hands the memory its kernel frees back to the host
# (virtio-balloon feature 5, VIRTIO_BALLOON_F_REPORTING; see "The memory matters" in
# bench/README.md).
free_page_reporting() {
  local features
  for features in /sys/bus/virtio/drivers/virtio_balloon/*/features; do
    [[ -r $features && $(cut -c6 "$features") == 1 ]] && return 0
  done
  return 1
}

keyshard_version=$("$keyshard" --version 2> /dev/null | head -n1)
report=$(
  echo "# keyshard benchmark"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ); host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "- keyshard: ${keyshard_version:-not built} ($keyshard)"
  echo "- data: $events_file, $(file_bytes "$events_file") bytes, $(file_lines "$events_file") events, seed $seed" \
       "($gen_events --bytes $total_bytes --seed $seed)"
  echo "- each row: median wall time over $runs run(s), warm page cache; MB/s = input bytes (uncompressed) / 10^6 / seconds"
  if free_page_reporting; then
    echo "- memory: this VM hands the memory its kernel frees back to the host (free page reporting), so rows that" \
         "write through the page cache vary from run to run (the headline row writes its whole blocks past it)" \
         "(see \"The memory matters\" in bench/README.md)"
  fi
  echo
  echo "| contender | input | MB/s | Mevents/s | peak RSS MiB | CPU s/GB | cores busy | vs keyshard -n $parts |"
  echo "|---|---|---:|---:|---:|---:|---:|---|"
  for i in "${!row_name[@]}"; do
    echo "| ${row_name[i]} | ${row_input[i]} | ${row_mbs[i]} | ${row_meps[i]} | ${row_rss[i]} |" \
         "${row_cpu[i]} | ${row_cores[i]} | ${row_ratio[i]} |"
  done
  echo
  echo "Slices are prefixes of the same event stream; their MB/s is comparable, their absolute time is not."
  echo
  echo "\`-n 1024\` against \`-n $parts\`: $(share "${row_mbs[disk_1024]}" "${row_mbs[headline]}")" \
       "on the disk (OUT = $out_dir), $(share "${row_mbs[tmpfs_1024]}" "${row_mbs[tmpfs_parts]}")" \
       "into tmpfs (OUT = $shm_out_dir). Side by side on the disk, the median of" \
       "$resize_rounds rounds' shares, each round running both: $resize_share." \
       "Creating 1,024 empty files there (\`touch\`, median of $resize_rounds rounds):" \
       "$create_report."
  echo
  echo "The targets (see bench/README.md), for the defaults and for \`--commit async\`:"
  echo
  echo "| target | keyshard -n $parts (defaults) | keyshard -n $parts --commit async |"
  echo "|---|---|---|"
  for line in "${target_rows[@]}"; do echo "$line"; done
  if ((${#checkpoint_report[@]} > 0)); then
    echo
    echo "Checkpoint cost on $full_label, side by side, median of ${checkpoint_rounds} rounds" \
         "(throughput relative to the first row: no periodic checkpoint, under --commit sync):"
    echo
    echo "| run | MB/s | relative |"
    echo "|---|---:|---:|"
    for line in "${checkpoint_report[@]}"; do echo "$line"; done
  fi
  if ((${#order_report[@]} > 0)); then
    echo
    echo "Per-key order on $(label_of "$parallel_input") (bench/check_key_order.py):"
    echo
    for line in "${order_report[@]}"; do echo "- $line"; done
  fi
  echo
  echo "## Commands (run from the repository root; OUT = $out_dir, emptied before each run)"
  echo
  for i in "${!row_name[@]}"; do
    echo "- ${row_name[i]}:"
    echo '  ```'
    echo "  ${row_cmd[i]}"
    echo '  ```'
  done
)
echo "$report"
echo "$report" > "$results_dir/latest.md"
log "written to $results_dir/latest.md"
