// The options of `split` written one way, so that two runs that act alike compare equal.
#pragma once

#include <string>

#include "cli/options.h"

namespace keyshard {

/// `options` with the settings that have several spellings written one way: a --hash alias,
/// --compress and --hot-keys with their defaults spelt out, --max-line-size in bytes, the
/// --annotate fields in the order they are written, -k paths as JSON Pointers, --delimiter as
/// the byte it is (and as the default unless --format delimited), and DIR's own
/// dead-letter file (DIR is the output directory of the run) as the default, --missing-key and
/// each --salt's K as numbers, and, given the `other` run's options, --name as `other`'s when
/// both name every partition's file alike. Two runs whose options are equal so act alike (what
/// --incremental requires). Options that are refused come back as given.
SplitOptions acting_options(const SplitOptions& options, const std::string& dir,
                            const SplitOptions* other = nullptr);

}  // namespace keyshard
