// "Did you mean": the closest known word to a misspelt one, by edit distance.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace keyshard {

/// The candidate nearest to `word` when it is close enough to be a likely typo, letters compared
/// without case: one edit away (a swap of two letters side by side is one), else the only
/// candidate `word` starts ("--out" for --output), else at most a third of the word's length in
/// edits, and at most 3; nullopt otherwise.
std::optional<std::string> closest_word(std::string_view word,
                                        const std::vector<std::string>& candidates);

}  // namespace keyshard
