// The words of the command line, read before CLI11 parses them.
#include "cli/command_words.h"

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <utility>

#include <CLI/CLI.hpp>

namespace keyshard {
namespace {

// The command named on the line and the options it and keyshard itself take.
struct OptionWords {
  OptionWords(CLI::App& app, int argc, char** argv) : app(app) {
    // The command: the first word that names one (the options before it may be long ones).
    for (int i = 1; i < argc && command == nullptr && std::string_view(argv[i]) != "--"; ++i) {
      for (CLI::App* sub : app.get_subcommands({})) {
        if (sub->get_name() == argv[i]) {
          command = sub;
          command_at = i;
        }
      }
    }
  }
  const CLI::Option* named(const std::string& name) const {
    const CLI::Option* option = command ? command->get_option_no_throw(name) : nullptr;
    return option != nullptr ? option : app.get_option_no_throw(name);
  }
  // Whether `word` (an option, or short options run together) takes the next word as its
  // value. Short options run together (-qk): the first that takes a value takes the rest of
  // the word, or the next word when nothing is left.
  bool takes_next(std::string_view word) const {
    if (word.size() < 2 || word[0] != '-') return false;
    if (word[1] == '-') {  // --name VALUE
      const CLI::Option* option = named(std::string(word));
      return word.find('=') == std::string_view::npos && option != nullptr &&
             option->get_expected_min() > 0;
    }
    for (size_t at = 1; at < word.size(); ++at) {
      const CLI::Option* option = named(std::string("-") + word[at]);
      if (option == nullptr) return false;
      if (option->get_expected_min() > 0) return at + 1 == word.size();
    }
    return false;
  }

  CLI::App& app;
  CLI::App* command = nullptr;
  int command_at = 0;
};

// The command's operands when they are a list (split's inputs, which's keys), else null.
CLI::Option* list_operands(CLI::App& command) {
  for (CLI::Option* option : command.get_options()) {
    if (option->get_positional() && option->get_items_expected_max() > 1) return option;
  }
  return nullptr;
}

}  // namespace

// Whether -h or --help is on the command line (options end at "--"): it wins over any mistake in
// the other words, as it does over an unknown option. The value of an option is not one (-k -h:
// the field "-h").
bool help_requested(CLI::App& app, int argc, char** argv) {
  const OptionWords words(app, argc, argv);
  bool value_next = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (std::exchange(value_next, false)) continue;
    if (word == "--") break;
    if (word == "-h" || word == "--help") return true;
    value_next = words.takes_next(word);
  }
  return false;
}

// A value CLI11 would misread: "--hash=" (it takes the next word as the value) and "-n=8" (the
// value "=8"). Options end at "--".
std::optional<std::string> misspelt_value(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word == "--") break;
    if (word.starts_with("--") && word.size() > 3 && word.back() == '=' &&
        word.find('=') == word.size() - 1) {
      const std::string_view name = word.substr(0, word.size() - 1);
      return fmt::format("{} has no value after '='; give one ({}=VALUE or {} VALUE)", word, name,
                         name);
    }
    if (word.size() > 2 && word[0] == '-' && word[1] != '-' && word[2] == '=') {
      const std::string_view name = word.substr(0, 2), value = word.substr(3);
      return fmt::format("{}: a short option takes its value after a space ({} {}), not '='",
                         word, name, value.empty() ? "VALUE" : value);
    }
  }
  return std::nullopt;
}

// A long option given with one dash ("-key user_id", "-hash crc32"). CLI11 reads such a word as
// short options run together: "-k ey", a key nobody meant, with "user_id" taken for an input;
// "-h ...", the help, after which the run exits 0 having done nothing. Refused, naming the option
// (-help, a request for the help either way, is left to show it). The word after an option
// that takes a value is that value, whatever it spells (-k -key: the field "-key").
std::optional<std::string> one_dash_long_option(CLI::App& app, int argc, char** argv) {
  const OptionWords words(app, argc, argv);
  bool value_next = false;  // the word is the value of the option before it
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (std::exchange(value_next, false)) continue;  // (even "--": CLI11 takes it so)
    if (word == "--") break;
    if (word.size() < 2 || word[0] != '-') continue;
    if (word[1] != '-') {
      const std::string name(word.substr(1, word.find('=') - 1));
      if (name != "help" && name.size() > 1 && words.named("--" + name) != nullptr) {
        return fmt::format("{}: a long option takes two dashes: --{}", word, name);
      }
    }
    value_next = words.takes_next(word);
  }
  return std::nullopt;
}

int options_end(CLI::App& app, int argc, char** argv) {
  const OptionWords words(app, argc, argv);
  if (words.command == nullptr) return argc;
  const CLI::Option* operands = list_operands(*words.command);
  if (operands == nullptr) return argc;
  bool value_next = false;
  bool operand_before = false;
  for (int i = words.command_at + 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (std::exchange(value_next, false)) continue;
    if (word == "--") return operand_before ? i : argc;
    if (word.size() >= 2 && word[0] == '-') {
      value_next = words.takes_next(word);
    } else {
      operand_before = true;
    }
  }
  return argc;
}

void add_operands(CLI::App& app, const std::vector<std::string>& words) {
  if (words.empty()) return;
  for (CLI::App* command : app.get_subcommands()) {  // the one on the command line
    CLI::Option* operands = list_operands(*command);
    if (operands == nullptr) continue;
    std::vector<std::string> values = operands->results();
    values.insert(values.end(), words.begin(), words.end());
    const bool lists = operands->get_allow_extra_args();
    operands->allow_extra_args(false);  // each value as it stands
    operands->clear();
    for (const std::string& value : values) operands->add_result(value);
    operands->allow_extra_args(lists);
    operands->run_callback();
  }
}

}  // namespace keyshard
