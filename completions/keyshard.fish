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

function __keyshard_using
    set -l command (__keyshard_command)
    and test "$command" = $argv[1]
end

# No file names unless asked for below.
complete -c keyshard -f

# The top level.
complete -c keyshard -n 'not __keyshard_command' -a split \
    -d 'Partition events by key into N ordered streams'
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

# keyshard split: Input
set -l split '__keyshard_using split'
complete -c keyshard -n $split -F -d 'Input file'
complete -c keyshard -n $split -s h -l help -d 'Print help and exit'
complete -c keyshard -n $split -l format -x -a 'json delimited line' -d 'Input format'
complete -c keyshard -n $split -l delimiter -x -a 'tab space ,' \
    -d 'Field delimiter for --format delimited'
complete -c keyshard -n $split -l no-validate -d 'Find the key without validating each whole line'
complete -c keyshard -n $split -l max-line-size -x -d 'Longest line accepted (default 64MiB)'
# Keys
complete -c keyshard -n $split -s k -l key -x \
    -d 'Key path or field number; repeat for a composite key'
complete -c keyshard -n $split -l missing-key -x -a 'bad partition:' \
    -d 'Event without the key: bad line, or partition:P'
# Partitioning
complete -c keyshard -n $split -s n -l partitions -x -d 'Number of partitions'
complete -c keyshard -n $split -l hash -x -a '(__keyshard_hashes)' \
    -d 'Partitioner (default murmur2)'
complete -c keyshard -n $split -s j -l threads -x -d 'Worker threads (default: all cores)'
# Output
complete -c keyshard -n $split -s o -l output -x \
    -a '(__fish_complete_directories (commandline -ct)) -' \
    -d 'Output directory, or - for stdout'
complete -c keyshard -n $split -l name -x -d 'Partition file name template'
complete -c keyshard -n $split -l compress -x -a '(printf "%s\n" zstd zstd:(seq 1 22))' \
    -d 'Compress outputs with zstd'
complete -c keyshard -n $split -l annotate -x \
    -a 'partition offset key partition,offset partition,offset,key' \
    -d 'Add _partition, _offset and/or _key fields'
complete -c keyshard -n $split -l force -d 'Write into a non-empty output directory'
# Processing
complete -c keyshard -n $split -l exec -x -a '(__fish_complete_command)' \
    -d 'Feed each partition to its own /bin/sh -c CMD'
complete -c keyshard -n $split -l exec-per -x -a 'partition worker' \
    -d 'One child per partition or per worker'
complete -c keyshard -n $split -l allow-early-exit -d 'A child may exit before its input ends'
# Bad lines
complete -c keyshard -n $split -l on-bad -x -a 'dead-letter skip fail' \
    -d 'What to do with a bad line'
complete -c keyshard -n $split -l dead-letter -r -F -d 'Dead-letter file'
# Reporting
complete -c keyshard -n $split -s q -l quiet -d 'No summary on stderr'

# keyshard which
set -l which '__keyshard_using which'
complete -c keyshard -n $which -s h -l help -d 'Print help and exit'
complete -c keyshard -n $which -s n -l partitions -x -d 'Number of partitions'
complete -c keyshard -n $which -l hash -x -a '(__keyshard_hashes)' \
    -d 'Partitioner (default murmur2)'
