// One option's text → its setting in a RunConfig, or a refusal (status 2) that says what to type
// instead. split_config.cc applies them in order and refuses the combinations that conflict.
#include "cli/option_values.h"

#include <fmt/format.h>
#include <zstd.h>

#include <charconv>

#include "keys/key_path.h"

namespace keyshard {

Status usage(std::string reason) { return Status::error(std::move(reason), {}, kExitUsage); }

bool parse_size(std::string_view text, uint64_t& bytes) {
  uint64_t number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc() || end == text.data()) return false;
  const std::string_view suffix(end, static_cast<size_t>(text.data() + text.size() - end));
  uint64_t unit = 0;
  if (suffix.empty() || suffix == "B") unit = 1;
  else if (suffix == "K" || suffix == "KiB") unit = 1ull << 10;
  else if (suffix == "M" || suffix == "MiB") unit = 1ull << 20;
  else if (suffix == "G" || suffix == "GiB") unit = 1ull << 30;
  else if (suffix == "KB") unit = 1000;
  else if (suffix == "MB") unit = 1000 * 1000;
  else if (suffix == "GB") unit = 1000 * 1000 * 1000;
  else return false;
  if (number > UINT64_MAX / unit) return false;
  bytes = number * unit;
  return true;
}

Status parse_delimiter(std::string_view text, char& delimiter) {
  if (text == "\\t" || text == "tab") {
    delimiter = '\t';
  } else if (text == "space") {
    delimiter = ' ';
  } else if (text.size() == 1 && text[0] != '\n') {
    delimiter = text[0];
  } else if (text == "\n") {
    return usage("invalid --delimiter: a newline ends each line, so it cannot split fields; "
                 "give another byte, or \\t, tab or space");
  } else {
    return usage("invalid --delimiter \"" + std::string(text) +
                 "\": give one byte, or \\t, tab or space");
  }
  return {};
}

Status parse_compress(const std::string& text, RunConfig& config) {
  if (text.empty() || text == "none") return {};
  if (text == "zstd") {
    config.zstd_level = 3;
    return {};
  }
  int level = 0;
  if (text.starts_with("zstd:")) {
    const std::string_view digits = std::string_view(text).substr(5);
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), level);
    if (error == std::errc() && end == digits.data() + digits.size() && level >= 1 &&
        level <= ZSTD_maxCLevel()) {
      config.zstd_level = level;
      return {};
    }
  }
  return usage(fmt::format("invalid --compress \"{}\": use zstd, zstd:LEVEL (LEVEL 1..{}) or none",
                           text, ZSTD_maxCLevel()));
}

Status parse_annotate(const std::string& text, RunConfig& config) {
  if (text.empty()) return {};
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string field = text.substr(start, comma - start);
    bool* chosen = field == "partition" ? &config.annotate_partition
                   : field == "offset"  ? &config.annotate_offset
                   : field == "key"     ? &config.annotate_key
                   : field == "salt"    ? &config.annotate_salt
                                        : nullptr;
    if (chosen == nullptr) {
      return usage("invalid --annotate field \"" + field +
                   "\": use partition, offset, key, salt, or several joined by commas");
    }
    if (*chosen) return usage("--annotate names \"" + field + "\" twice");
    *chosen = true;
    start = comma + 1;
  }
  if (config.keys.format != InputFormat::kJson) {
    return usage("--annotate adds JSON fields, so it needs --format json");
  }
  return {};
}

Status parse_salts(const SplitOptions& options, RunConfig& config) {
  for (const std::string& text : options.salts) {
    const size_t colon = text.rfind(':');
    uint32_t sub_keys = 0;
    if (colon != std::string::npos) {  // KEY may be empty: the empty key can be hot too
      const char* first = text.data() + colon + 1;
      const char* last = text.data() + text.size();
      const auto [end, error] = std::from_chars(first, last, sub_keys);
      if (error == std::errc() && end == last && sub_keys >= 2 && sub_keys <= 4096) {
        const std::string key = text.substr(0, colon);
        for (const auto& [earlier, count] : config.salts) {
          if (earlier == key) {
            return usage("--salt is given twice for the key \"" + key +
                         "\": give each key once");
          }
        }
        config.salts.emplace_back(key, sub_keys);
        continue;
      }
    }
    return usage("invalid --salt \"" + text + "\": give KEY:K with K from 2 to 4096, e.g. " +
                 "--salt user_celebrity:8");
  }
  if (!options.hot_keys.empty()) {
    double share = 0.02;
    bool good = options.hot_keys == "auto";
    if (!good && options.hot_keys.starts_with("auto:")) {
      std::string number = options.hot_keys.substr(5);
      const bool percent = !number.empty() && number.back() == '%';
      if (percent) number.pop_back();
      const auto [end, error] =
          std::from_chars(number.data(), number.data() + number.size(), share);
      if (percent) share /= 100;
      // (SHARE's floor, kMinHotKeyShare, is checked where a new run starts, so that a run
      // recorded with a smaller SHARE before there was a floor can go on)
      good = error == std::errc() && end == number.data() + number.size() && share > 0 &&
             share < 1;
    }
    if (!good) return invalid_hot_keys(options.hot_keys);
    if (config.partitions < 2) {
      return usage("--hot-keys spreads a hot key over the partitions; with -n 1 there is "
                   "nothing to spread it over");
    }
    config.hot_keys_share = share;
  }
  if (!options.salt_by.empty()) {
    if (config.keys.format != InputFormat::kJson) return usage("--salt-by needs --format json");
    KeyPath path;
    if (Status status = parse_key_path(options.salt_by, path); !status) return status;
    config.salt_by = std::move(path);
  }
  return {};
}

Status invalid_hot_keys(const std::string& text) {
  static_assert(kMinHotKeyShare == 0.0001, "the message gives SHARE's floor");
  return usage("invalid --hot-keys \"" + text + "\": use auto, or auto:SHARE with SHARE from "
               "0.01% to below 100%, such as auto:5% or auto:0.05");
}

Status parse_missing_key(const std::string& text, RunConfig& config) {
  if (text == "bad") return {};
  uint32_t partition = 0;
  if (text.starts_with("partition:")) {
    const std::string_view digits = std::string_view(text).substr(10);
    const auto [end, error] =
        std::from_chars(digits.data(), digits.data() + digits.size(), partition);
    if (error == std::errc() && end == digits.data() + digits.size()) {
      if (partition >= config.partitions) {
        return usage(fmt::format("--missing-key partition:{} is out of range: partitions are "
                                 "0..{}",
                                 partition, config.partitions - 1));
      }
      config.missing_key_partition = partition;
      return {};
    }
  }
  return usage("invalid --missing-key \"" + text + "\": use bad or partition:P");
}

// 64MiB, or a duration: 30s, 5m, 1h; off: only at the start and the end of the run; auto: by
// size, sync_ahead_bytes() for config.partitions, and kAutoCheckpointSeconds apart at least.
Status parse_checkpoint_every(const std::string& text, RunConfig& config) {
  config.checkpoint_every_bytes = 0;
  config.checkpoint_every_seconds = 0;
  config.checkpoint_least_seconds = 0;
  if (text == "off") return {};
  if (text == "auto") {
    config.checkpoint_every_bytes = sync_ahead_bytes(config.partitions);
    config.checkpoint_least_seconds = kAutoCheckpointSeconds;
    return {};
  }
  if (parse_size(text, config.checkpoint_every_bytes) && config.checkpoint_every_bytes > 0) {
    return {};
  }
  double number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  const std::string_view unit(end, static_cast<size_t>(text.data() + text.size() - end));
  const double scale = unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : 0;
  if (error == std::errc() && number > 0 && scale > 0) {
    config.checkpoint_every_seconds = number * scale;
    return {};
  }
  return usage("invalid --checkpoint-every \"" + text +
               "\": give a size of input (64MiB), a time (30s, 5m, 1h), auto or off");
}

Status parse_guardrails(const SplitOptions& options, RunConfig& config) {
  if (!options.max_bad.empty()) {
    std::string text = options.max_bad;
    const bool percent = text.back() == '%';
    if (percent) text.pop_back();
    bool good = false;
    if (percent) {
      double share = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), share);
      good = error == std::errc() && end == text.data() + text.size() && share >= 0 &&
             share <= 100;
      config.max_bad_share = share / 100;
    } else {
      uint64_t count = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
      good = error == std::errc() && end == text.data() + text.size();
      config.max_bad_lines = count;
    }
    if (!good) {
      return usage("invalid --max-bad \"" + options.max_bad +
                   "\": give a number of lines (100) or a share of the lines read (0.5%)");
    }
  }
  if (!options.max_skew.empty()) {
    double skew = 0;
    const std::string& text = options.max_skew;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), skew);
    // (`!(skew >= 1)`: NaN, which compares false with anything, is refused too)
    if (error != std::errc() || end != text.data() + text.size() || !(skew >= 1)) {
      return usage("invalid --max-skew \"" + text +
                   "\": give the largest max/mean events per partition allowed, at least 1 "
                   "(e.g. 2.5)");
    }
    config.max_skew = skew;
  }
  return {};
}

}  // namespace keyshard
