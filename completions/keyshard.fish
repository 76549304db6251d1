# fish completion for keyshard(1). Install it as
# ~/.config/fish/completions/keyshard.fish (or in a directory of $fish_complete_path).
# tests/cli/docs_sync.sh fails when the flags here and those of --help drift apart.

# The subcommand is the first word after "keyshard" that is not a flag (the top level has no
# flag that takes a value). Prints it, or fails when there is none yet.
function __keyshard_command
    for token in (commandline -opc)[2..-1]
        if not string match -q -- '-*' $token
            echo $token
            return 0
        end
    end
    return 1
end

# True when the subcommand is one of $argv.
function __keyshard_using
    set -l command (__keyshard_command)
    and contains -- $command $argv
end

# --annotate takes a comma-separated list: after the fields typed so far, each one not among them.
function __keyshard_annotate_fields
    set -l token (string replace -r -- '^--annotate=' '' (commandline -ct))
    set -l typed (string replace -r -- '[^,]*$' '' $token)
    for field in partition offset key salt
        if not contains -- $field (string split -- , $typed)
            echo $typed$field
        end
    end
end

# No file names unless asked for below.
complete -c keyshard -f

# The top level.
complete -c keyshard -n 'not __keyshard_command' -a help \
    -d 'Print the help of a command, or of all'
complete -c keyshard -n '__keyshard_using help; and test (count (commandline -opc)) -eq 2' \
    -a 'split resume verify stats plan which'
complete -c keyshard -n 'not __keyshard_command' -a split \
    -d 'Partition events by key into N ordered streams'
complete -c keyshard -n 'not __keyshard_command' -a resume \
    -d 'Continue an interrupted split from its last checkpoint'
complete -c keyshard -n 'not __keyshard_command' -a verify \
    -d 'Check the outputs of a split against its checkpoint'
complete -c keyshard -n 'not __keyshard_command' -a stats \
    -d 'Report partition load, skew and hot keys'
complete -c keyshard -n 'not __keyshard_command' -a plan \
    -d 'Show how many keys move when N partitions become M'
complete -c keyshard -n 'not __keyshard_command' -a which -d 'Print the partition of each key'
complete -c keyshard -n 'not __keyshard_command' -s h -l help -d 'Print help and exit'
complete -c keyshard -n 'not __keyshard_command' -s V -l version \
    -d 'Print version information and exit'

# The --hash choices, each with what it matches.
function __keyshard_hashes
    printf '%s\t%s\n' \
        murmur2 'Kafka Java client default' kafka 'Alias of murmur2' \
        crc32 'librdkafka consistent' consistent 'Alias of crc32' \
        fnv1a 'librdkafka fnv1a' md5 'int(md5(key).hexdigest(), 16) % N' \
        xxh3 'XXH3_64bits(key) % N' jump 'Jump Consistent Hash of XXH3_64bits'
end

# The --commit choices, each with what it survives.
function __keyshard_commit_modes
    printf '%s\t%s\n' \
        sync 'fsync outputs before each checkpoint: survives a power cut' \
        async 'no fsync of outputs: survives a crash, not a power cut'
end

# The options split, stats and plan share: Input and Keys.
set -l reading '__keyshard_using split stats plan'
complete -c keyshard -n $reading -F -d 'Input file'
complete -c keyshard -n $reading -s h -l help -d 'Print help and exit'
complete -c keyshard -n $reading -l format -x -a 'json delimited line' -d 'Input format'
complete -c keyshard -n $reading -l delimiter -x -a 'tab space ,' \
    -d 'Field delimiter for --format delimited'
complete -c keyshard -n $reading -l no-validate \
    -d 'Find the key without validating each whole line'
complete -c keyshard -n $reading -l max-line-size -x -d 'Longest line accepted (default 64MiB)'
complete -c keyshard -n $reading -s k -l key -x \
    -d 'Key path or field number; repeat for a composite key'
complete -c keyshard -n $reading -l missing-key -x -a 'bad partition:' \
    -d 'Event without the key: bad line, or partition:P'

# Partitioning, shared by split and stats
set -l partitioning '__keyshard_using split stats'
complete -c keyshard -n $partitioning -s n -l partitions -x -d 'Number of partitions'
complete -c keyshard -n $partitioning -l hash -x -a '(__keyshard_hashes)' \
    -d 'Partitioner (default murmur2)'
complete -c keyshard -n $partitioning -s j -l threads -x -d 'Worker threads (default: all cores)'

# keyshard split: Hot keys
set -l split '__keyshard_using split'
complete -c keyshard -n $split -l salt -x -d 'Spread KEY over K sub-keys (KEY:K, repeatable)'
complete -c keyshard -n $split -l salt-by -x -d 'Pick the sub-key by a hash of this field'
complete -c keyshard -n $split -l hot-keys -x -a 'auto auto:1% auto:2% auto:5% auto:10%' \
    -d 'Salt any key whose share of events passes SHARE (default 2%)'
# Output
complete -c keyshard -n $split -s o -l output -x \
    -a '(__fish_complete_directories (commandline -ct)) -' \
    -d 'Output directory, or - for stdout'
complete -c keyshard -n $split -l name -x -d 'Partition file name template'
complete -c keyshard -n $split -l compress -x -a '(printf "%s\n" zstd zstd:(seq 1 22) none)' \
    -d 'Compress outputs with zstd'
complete -c keyshard -n $split -l annotate -x -a '(__keyshard_annotate_fields)' \
    -d 'Add _partition, _offset, _salt and/or _key fields'
complete -c keyshard -n $split -l force -d 'Write into a non-empty output directory, and over a --dead-letter file'
# Processing
complete -c keyshard -n $split -l exec -x -a '(__fish_complete_command)' \
    -d 'Feed each partition to its own /bin/sh -c CMD'
complete -c keyshard -n $split -l exec-per -x -a 'partition worker' \
    -d 'With --exec: one child per partition or per worker'
complete -c keyshard -n $split -l allow-early-exit -d 'With --exec: a child may exit before its input ends'
# Bad lines
complete -c keyshard -n $split -l on-bad -x -a 'dead-letter skip fail' \
    -d 'What to do with a bad line'
complete -c keyshard -n $split -l dead-letter -r -F -d 'Dead-letter file'
# Checkpoints
complete -c keyshard -n $split -l checkpoint-every -x -a 'auto off 64MiB 30s 5m' \
    -d 'Checkpoint after this much input, or this often (64MiB, 30s, 5m, auto, off)'
complete -c keyshard -n $split -l commit -x -a '(__keyshard_commit_modes)' \
    -d 'How durable each checkpoint is (default sync)'
complete -c keyshard -n $split -l incremental \
    -d 'Continue each file where the last run stopped and append (for cron)'
complete -c keyshard -n $split -l max-bad -x -d 'Exit 3 if bad lines exceed N or P% of lines'
complete -c keyshard -n $split -l max-skew -x -d 'Exit 4 if max/mean events per partition > R'
# Reporting (split and resume)
set -l running '__keyshard_using split resume'
complete -c keyshard -n $running -s q -l quiet -d 'No summary (nor progress) on stderr'
complete -c keyshard -n $running -s v -l verbose -d 'Add stage times and checkpoint counts to the summary'
complete -c keyshard -n '__keyshard_using split resume stats' -l progress \
    -d 'Show the progress line even when stderr is not a terminal'
complete -c keyshard -n '__keyshard_using split resume stats' -l no-progress \
    -d 'Never show the progress line'

# keyshard resume DIR
set -l resume '__keyshard_using resume'
complete -c keyshard -n $resume -a '(__fish_complete_directories (commandline -ct))' \
    -d 'Output directory of the run'
complete -c keyshard -n $resume -s h -l help -d 'Print help and exit'
complete -c keyshard -n $resume -s j -l threads -x -d 'Worker threads (default: as recorded)'

# keyshard verify DIR
set -l verify '__keyshard_using verify'
complete -c keyshard -n $verify -a '(__fish_complete_directories (commandline -ct))' \
    -d 'Output directory of a split'
complete -c keyshard -n $verify -s h -l help -d 'Print help and exit'
complete -c keyshard -n $verify -s q -l quiet -d 'Print only the files that differ'

# keyshard stats: Report
set -l stats '__keyshard_using stats'
complete -c keyshard -n $stats -l top -x -d 'Heaviest keys to list (default 10)'
complete -c keyshard -n $stats -l what-if-salt -x \
    -d 'Skew if the listed keys were salted over K sub-keys (default 8)'
complete -c keyshard -n $stats -l json -d 'The report as JSON'

# keyshard plan: Partitioning and Report
set -l plan '__keyshard_using plan'
complete -c keyshard -n $plan -l from -x -d 'Partitions now'
complete -c keyshard -n $plan -l to -x -d 'Partitions after the resize'
complete -c keyshard -n $plan -l json -d 'The report as JSON'

# keyshard which
set -l which '__keyshard_using which'
complete -c keyshard -n $which -s h -l help -d 'Print help and exit'
complete -c keyshard -n $which -s n -l partitions -x -d 'Number of partitions'
complete -c keyshard -n $which -l hash -x -a '(__keyshard_hashes)' \
    -d 'Partitioner (default murmur2)'
