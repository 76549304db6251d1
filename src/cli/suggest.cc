#include "cli/suggest.h"

#include <algorithm>

namespace keyshard {
namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// The edits that turn one word into the other (insert, delete or change a letter, or swap two
// that stand side by side: "tpo" is one edit from "top"), letters compared without case.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const bool same = lower(a[i - 1]) == lower(b[j - 1]);
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (same ? 0 : 1)});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

bool starts_with(std::string_view word, std::string_view start) {
  return word.size() >= start.size() &&
         std::equal(start.begin(), start.end(), word.begin(),
                    [](char x, char y) { return lower(x) == lower(y); });
}

}  // namespace

std::optional<std::string> closest_word(std::string_view word,
                                        const std::vector<std::string>& candidates) {
  const size_t allowed = std::min<size_t>(3, std::max<size_t>(1, word.size() / 3));
  std::optional<std::string> best, only_start;
  size_t best_distance = allowed + 1, starts = 0;
  for (const std::string& candidate : candidates) {
    const size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
    // The start of a longer word ("--out" for --output), at least two letters of it.
    const size_t letters = word.size() - std::min(word.find_first_not_of('-'), word.size());
    if (letters >= 2 && candidate.size() > word.size() && starts_with(candidate, word)) {
      ++starts;
      only_start = candidate;
    }
  }
  // One edit away comes first ("--form" is --from, not --format), then the one word this
  // starts, then the closest within `allowed` edits.
  if (best_distance <= 1) return best;
  if (starts == 1) return only_start;
  return best;
}

}  // namespace keyshard
