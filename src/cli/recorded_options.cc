#include "cli/recorded_options.h"

#include <simdjson.h>

#include <functional>
#include <variant>
#include <vector>

#include "util/json_text.h"

namespace keyshard {
namespace {

using Field = std::variant<std::string SplitOptions::*, bool SplitOptions::*,
                           uint32_t SplitOptions::*,
                           std::vector<std::string> SplitOptions::*>;

struct Recorded {
  const char* flag;  // as the user types it, for messages and as the JSON name
  Field field;
  bool shapes_outputs;  // a difference between two --incremental runs is refused
};

// -j does not change a single output byte; everything else here does.
const std::vector<Recorded>& recorded() {
  static const std::vector<Recorded> table = {
      {"--format", &SplitOptions::format, true},
      {"--delimiter", &SplitOptions::delimiter, true},
      {"--no-validate", &SplitOptions::no_validate, true},
      {"--max-line-size", &SplitOptions::max_line_size, true},
      {"--chunk-size", &SplitOptions::chunk_size, false},
      {"--key", &SplitOptions::keys, true},
      {"--missing-key", &SplitOptions::missing_key, true},
      {"--salt", &SplitOptions::salts, true},
      {"--salt-by", &SplitOptions::salt_by, true},
      {"--hot-keys", &SplitOptions::hot_keys, true},
      {"--partitions", &SplitOptions::partitions, true},
      {"--hash", &SplitOptions::hash, true},
      {"--threads", &SplitOptions::threads, false},
      {"--output", &SplitOptions::output, false},
      {"--name", &SplitOptions::name, true},
      {"--compress", &SplitOptions::compress, true},
      {"--annotate", &SplitOptions::annotate, true},
      {"--exec", &SplitOptions::exec, true},
      {"--exec-per", &SplitOptions::exec_per, true},
      {"--allow-early-exit", &SplitOptions::allow_early_exit, false},
      {"--on-bad", &SplitOptions::on_bad, true},
      {"--dead-letter", &SplitOptions::dead_letter, true},
      {"--checkpoint-every", &SplitOptions::checkpoint_every, false},
      {"--commit", &SplitOptions::commit, false},
      {"--incremental", &SplitOptions::incremental, true},
      {"--max-bad", &SplitOptions::max_bad, false},
      {"--max-skew", &SplitOptions::max_skew, false},
  };
  return table;
}

std::string show(const SplitOptions& options, const Field& field) {
  return std::visit(
      [&](auto member) -> std::string {
        const auto& value = options.*member;
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return "\"" + value + "\"";
        } else if constexpr (std::is_same_v<T, bool>) {
          return value ? "on" : "off";
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          std::string out;
          for (const std::string& item : value) out += (out.empty() ? "\"" : " \"") + item + "\"";
          return out.empty() ? "(none)" : out;
        } else {
          return std::to_string(value);
        }
      },
      field);
}

bool read_value(simdjson::dom::element value, std::string& out) {
  std::string_view text;
  if (value.get(text) == simdjson::SUCCESS) {
    out = std::string(text);
    return true;
  }
  simdjson::dom::object object;
  return value.get(object) == simdjson::SUCCESS && object.size() == 1 &&
         object.at_key("base64").get(text) == simdjson::SUCCESS && decode_base64(text, out);
}

}  // namespace

std::string record_options(const SplitOptions& options) {
  std::string out = "{";
  bool first = true;
  for (const Recorded& r : recorded()) {
    if (!first) out += ",";
    first = false;
    append_json_string(out, r.flag + 2);
    out += ":";
    std::visit(
        [&](auto member) {
          const auto& value = options.*member;
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, std::string>) {
            // (A name that is not UTF-8 in base64: a resume gets back exactly the same bytes.)
            append_json_bytes(out, value);
          } else if constexpr (std::is_same_v<T, bool>) {
            out += value ? "true" : "false";
          } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            out += "[";
            for (size_t i = 0; i < value.size(); ++i) {
              if (i > 0) out += ",";
              append_json_bytes(out, value[i]);
            }
            out += "]";
          } else {
            out += std::to_string(value);
          }
        },
        r.field);
  }
  return out + "}";
}

Status restore_options(std::string_view json, const std::string& where, SplitOptions& options) {
  auto damaged = [&](const std::string& what) {
    return Status::error("damaged checkpoint (options: " + what + "); start over with --force",
                         where);
  };
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(json.data(), json.size()).get(object) != simdjson::SUCCESS) {
    return damaged("not an object");
  }
  for (const Recorded& r : recorded()) {
    simdjson::dom::element value;
    if (object.at_key(r.flag + 2).get(value) != simdjson::SUCCESS) {
      return damaged(std::string("no ") + r.flag);
    }
    const bool good = std::visit(
        [&](auto member) {
          auto& target = options.*member;
          using T = std::decay_t<decltype(target)>;
          if constexpr (std::is_same_v<T, std::string>) {
            return read_value(value, target);
          } else if constexpr (std::is_same_v<T, bool>) {
            return value.get(target) == simdjson::SUCCESS;
          } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            simdjson::dom::array items;
            if (value.get(items) != simdjson::SUCCESS) return false;
            target.clear();
            for (simdjson::dom::element item : items) {
              if (!read_value(item, target.emplace_back())) return false;
            }
          } else {
            uint64_t number = 0;
            if (value.get(number) != simdjson::SUCCESS || number > UINT32_MAX) return false;
            target = static_cast<T>(number);
          }
          return true;
        },
        r.field);
    if (!good) return damaged(std::string("bad ") + r.flag);
  }
  return {};
}

Status check_checkpoint_fits(const Checkpoint& checkpoint, const RunConfig& config,
                             const std::string& where) {
  const SaltState& salt = checkpoint.salt;
  const char* problem = nullptr;
  if (checkpoint.stats.partition_events.size() != config.partitions) {
    problem = "its partition counters do not match -n";
  } else if (checkpoint.exec != config.exec()) {
    problem = "its --exec does not match its options";
  } else if (!checkpoint.exec && checkpoint.outputs.size() != config.partitions) {
    problem = "its outputs do not match -n";
  } else if (config.sequenced_salting() ? salt.dealt.size() != config.salts.size()
                                        : !salt.dealt.empty()) {
    problem = "its salting state does not match --salt";
  } else if (!salt.decisions.empty() && !config.hot_keys_share) {
    problem = "it has hot-key decisions without --hot-keys";
  }
  if (problem == nullptr) return {};
  return Status::error(std::string("damaged checkpoint (") + problem + "); start over with --force",
                       where);
}

std::string first_difference(const SplitOptions& a, const SplitOptions& b) {
  // With one child per worker, -j decides which child gets which partitions.
  const bool per_worker = !a.exec.empty() && a.exec_per == "worker";
  for (const Recorded& r : recorded()) {
    const bool ties_partitions = per_worker && std::string_view(r.flag) == "--threads";
    if (!r.shapes_outputs && !ties_partitions) continue;
    const std::string left = show(a, r.field), right = show(b, r.field);
    if (left != right) return std::string(r.flag) + " " + left + " then, " + right + " now";
  }
  return {};
}

}  // namespace keyshard
