// keyshard's entry point: parse the command line, run the chosen command, and report. This is
// the only place that prints an error and chooses the exit status.
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/app.h"
#include "cli/command_words.h"
#include "cli/suggest.h"
#include "input/in_place_probe.h"
#include "keys/json_kernel.h"
#include "util/files.h"

namespace {

// CLI11 reads a word in brackets ("[a,b]") given to a list option as a list of its own. Every
// word of keyshard's lists is one value (a file name, a key), so such words are marked before
// parsing (a byte appended, and appended too to a word that already ends with it, so the mark is
// undone exactly), and the parsed values unmarked after.
constexpr char kMark = '\x01';

std::vector<std::string> mark_bracketed_words(int argc, char** argv) {
  std::vector<std::string> words(argv, argv + argc);
  for (size_t i = 1; i < words.size(); ++i) {
    std::string& word = words[i];
    const bool bracketed = word.size() >= 2 && word.front() == '[' && word.back() == ']';
    if (bracketed || (!word.empty() && word.back() == kMark)) word += kMark;
  }
  return words;
}

std::string unmark(std::string text) {
  if (!text.empty() && text.back() == kMark) text.pop_back();
  return text;
}

void unmark_parsed_values(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    std::vector<std::string> values = option->results();
    const auto marked = [](const std::string& value) {
      return !value.empty() && value.back() == kMark;
    };
    if (std::none_of(values.begin(), values.end(), marked)) continue;
    const bool lists = option->get_allow_extra_args();
    option->allow_extra_args(false);  // each value as it stands
    option->clear();
    for (std::string& value : values) option->add_result(unmark(std::move(value)));
    option->allow_extra_args(lists);
    option->run_callback();
  }
  for (CLI::App* sub : app.get_subcommands()) unmark_parsed_values(*sub);
}


// Every spelling the user could have meant in `app`: its subcommands, its long flags and the
// values of its choice options.
std::vector<std::string> known_words(const CLI::App* app) {
  std::vector<std::string> words;
  for (const CLI::App* sub : app->get_subcommands({})) words.push_back(sub->get_name());
  for (const CLI::Option* option : app->get_options()) {
    for (const std::string& name : option->get_lnames()) words.push_back("--" + name);
  }
  for (const CLI::App* sub : app->get_subcommands()) {  // the ones on this command line
    for (const CLI::Option* option : sub->get_options()) {
      for (const std::string& name : option->get_lnames()) words.push_back("--" + name);
    }
  }
  for (std::string_view hash : {"murmur2", "crc32", "fnv1a", "md5", "xxh3", "jump", "kafka",
                                "consistent", "json", "delimited", "line", "dead-letter", "skip",
                                "fail"}) {
    words.emplace_back(hash);
  }
  return words;
}

// CLI11's wording of an option given twice or without its value, said plainly.
std::string plain_cli11_text(std::string text) {
  static const std::string kTwice = ": At Most 1 required but received ";
  if (const size_t at = text.find(kTwice); at != std::string::npos) {
    return text.substr(0, at) + ": given " + text.substr(at + kTwice.size()) +
           " times; give it once";
  }
  static const std::string kMissing = ": 1 required ";
  if (const size_t at = text.find(kMissing);
      at != std::string::npos && text.ends_with(" missing")) {
    return text.substr(0, at) + ": needs a value";
  }
  // A required option or argument left out: what to give.
  if (text == "--partitions is required") return "no partition count: give one with -n, e.g. -n 8";
  if (text == "--from is required") return "no --from: give the partition count now, e.g. --from 8";
  if (text == "--to is required") return "no --to: give the partition count after, e.g. --to 12";
  if (text == "dir is required") return "no DIR: give the output directory of a split, e.g. out/";
  return text;
}

// "keyshard: <what CLI11 said>", a "did you mean" when a word looks misspelt, and where to look.
std::string usage_failure(const CLI::App* app, const CLI::Error& error) {
  const std::vector<CLI::App*> chosen = app->get_subcommands();
  const std::string command = chosen.empty() ? "" : chosen.front()->get_name();
  std::string text = plain_cli11_text(error.what());
  text.erase(std::remove(text.begin(), text.end(), kMark), text.end());  // see mark_bracketed_words
  if (chosen.empty() && text.starts_with("A subcommand is required")) {
    // `keyshard` alone, or with options only: the commands there are.
    std::vector<std::string> names;
    for (const CLI::App* sub : app->get_subcommands({})) names.push_back(sub->get_name());
    text = fmt::format("a command is required: one of {}", fmt::join(names, ", "));
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr ||
      dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
    // An unknown option also leaves the words after it unplaced, or a required option missing
    // (a misspelt --partitions): name the option, not them.
    // (The words after a "--" are operands, whatever they spell.)
    const CLI::App* where = chosen.empty() ? app : chosen.front();
    std::vector<std::string> unplaced = where->remaining();
    unplaced.erase(std::find(unplaced.begin(), unplaced.end(), "--"), unplaced.end());
    if (!chosen.empty()) {
      for (const std::string& word : app->remaining()) unplaced.push_back(word);  // before it
    }
    for (const std::string& extra : unplaced) {
      if (extra.size() > 1 && extra[0] == '-' && extra != "--") {
        text = "unknown option '" + extra.substr(0, extra.find('=')) + "'";
        const std::string option = extra.substr(0, extra.find('='));
        if (command == "resume") {
          text += " (resume continues with the options the run was started with; it takes only "
                  "-j and the reporting options)";
        } else if (command == "plan" && option == "--hash") {
          text += " (plan reports on all six partitioners)";
        } else if (command == "plan" && (option == "-n" || option == "--partitions")) {
          text += " (plan takes the partition counts as --from N --to M)";
        }
        break;
      }
    }
  }
  // (A value given holds whatever bytes it holds: its control bytes are shown as escapes.)
  std::string message = "keyshard: " + keyshard::visible_controls(text) + "\n";
  const std::vector<std::string> words = known_words(app);
  for (char& c : text) {
    if (std::string_view(",:;{}()\"'").find(c) != std::string_view::npos) c = ' ';
  }
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find(' ', start), text.size());
    const std::string word = text.substr(start, end - start);
    const bool known = std::find(words.begin(), words.end(), word) != words.end();
    if (word.size() > 2 && !known) {
      // An option is taken for an option, a value or command for one of those.
      std::vector<std::string> alike;
      for (const std::string& candidate : words) {
        if ((candidate[0] == '-') == (word[0] == '-')) alike.push_back(candidate);
      }
      if (auto guess = keyshard::closest_word(word, alike)) {
        message += "keyshard: did you mean '" + *guess + "'?\n";
        break;
      }
    }
    start = end + 1;
  }
  message += "Run 'keyshard" + (command.empty() ? "" : " " + command) + " --help' for usage.\n";
  return message;
}

// Whether standard output is a pipe or socket whose reader has gone (`| head` stopped early):
// asked of the descriptor itself, as errno may no longer tell why an earlier write failed.
bool stdout_reader_gone() {
  struct stat info {};
  if (::fstat(STDOUT_FILENO, &info) != 0 || !(S_ISFIFO(info.st_mode) || S_ISSOCK(info.st_mode))) {
    return false;
  }
  pollfd watch{STDOUT_FILENO, POLLOUT, 0};
  return ::poll(&watch, 1, 0) == 1 && (watch.revents & (POLLERR | POLLHUP)) != 0;
}

// A report (or --help) that did not reach standard output is a failure; a reader that stopped
// early is not.
keyshard::Status check_stdout_written() {
  const bool unwritten = std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  if (!unwritten) return {};
  const int error = errno;
  if (error == EPIPE || stdout_reader_gone()) return {};
  return keyshard::Status::error("cannot write to standard output: " +
                                 keyshard::errno_text(error));
}

// Memory or threads running out (ulimit -v, -u), and a file system error nothing caught, end
// the run with a message and exit status 1, as any failure to go on does (what was written is
// as after a crash), not with an abort. Any other exception that escapes is a defect: abort.
[[noreturn]] void stop_on_exception() {
  // (Nothing here allocates: memory may be what ran out.)
  const auto say = [](const char* text) { (void)!::write(STDERR_FILENO, text, std::strlen(text)); };
  if (std::current_exception()) {
    try {
      throw;
    } catch (const std::bad_alloc&) {
      say("keyshard: out of memory\n");
      ::_exit(keyshard::kExitFailure);
    } catch (const std::filesystem::filesystem_error& error) {
      say("keyshard: ");
      say(error.what());
      say("\n");
      ::_exit(keyshard::kExitFailure);
    } catch (const std::system_error& error) {
      if (error.code() == std::errc::resource_unavailable_try_again ||
          error.code() == std::errc::not_enough_memory) {
        // (Most often a thread that could not be started.)
        say("keyshard: out of system resources: ");
        say(error.what());
        say(" (is the limit of processes and threads, ulimit -u, or of memory reached?)\n");
        ::_exit(keyshard::kExitFailure);
      }
    } catch (...) {
    }
  }
  say("keyshard: internal error\n");
  std::abort();
}

}  // namespace

int main(int argc, char** argv) {
  keyshard::guard_standard_streams();  // before anything opens a file
  std::set_terminate(stop_on_exception);
  // A closed pipe must show up as EPIPE from write(), not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGXFSZ, SIG_IGN);  // a file-size limit is a write error naming the file, not death

  CLI::App app;
  keyshard::CommandLine line;
  keyshard::build_command_line(app, line);
  app.failure_message(usage_failure);
  for (CLI::App* sub : app.get_subcommands({})) sub->failure_message(usage_failure);

  // `keyshard help [COMMAND]`, as git and many tools take it: the help of COMMAND, or of all.
  std::vector<char*> arguments(argv, argv + argc);
  std::string help_flag = "--help";
  if (argc > 1 && std::string_view(argv[1]) == "help") {
    if (argc > 3) {
      std::fprintf(stderr, "keyshard: help takes one command name at most, as in "
                           "'keyshard help %s'\n", argv[2]);
      return keyshard::kExitUsage;
    }
    arguments.erase(arguments.begin() + 1);
    arguments.insert(arguments.begin() + (argc > 2 ? 2 : 1), help_flag.data());
    argv = arguments.data();
  }

  // An unknown first word is most likely a misspelt command.
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands({})) commands.push_back(sub->get_name());
  if (argc > 1 && argv[1][0] != '-' &&
      std::find(commands.begin(), commands.end(), argv[1]) == commands.end()) {
    std::fprintf(stderr, "keyshard: unknown command '%s'\n", argv[1]);
    if (auto guess = keyshard::closest_word(argv[1], commands)) {
      std::fprintf(stderr, "keyshard: did you mean '%s'?\n", guess->c_str());
    }
    std::fprintf(stderr, "Run 'keyshard --help' for the commands.\n");
    return keyshard::kExitUsage;
  }

  const bool help = keyshard::help_requested(app, argc, argv);
  std::optional<std::string> misspelt;
  if (!help) misspelt = keyshard::misspelt_value(argc, argv);
  if (!help && !misspelt) misspelt = keyshard::one_dash_long_option(app, argc, argv);
  if (misspelt) {
    std::fprintf(stderr, "keyshard: %s\n", misspelt->c_str());
    return keyshard::kExitUsage;
  }
  try {
    // Operands after a "--" that follows one are given to the command once the rest is parsed.
    const int end = keyshard::options_end(app, argc, argv);
    const std::vector<std::string> operands(argv + std::min(end + 1, argc), argv + argc);
    const std::vector<std::string> words = mark_bracketed_words(end, argv);
    std::vector<const char*> marked;
    for (const std::string& word : words) marked.push_back(word.c_str());
    app.parse(end, marked.data());
    unmark_parsed_values(app);
    keyshard::add_operands(app, operands);
  } catch (const CLI::ParseError& error) {
    // (The help of the command named before the mistake: CLI11 shows the chosen subcommand's.)
    const int code = help ? app.exit(CLI::CallForHelp()) : app.exit(error);
    if (code != 0) return keyshard::kExitUsage;
    const keyshard::Status written = check_stdout_written();  // --help, --version
    if (written.ok()) return 0;
    std::fprintf(stderr, "keyshard: %s\n", written.message().c_str());
    return written.exit_code();
  }

  keyshard::InPlacePolicy in_place = keyshard::InPlacePolicy::measured;
  keyshard::Status status = keyshard::in_place_policy_from_environment(in_place);
  if (status.ok()) status = keyshard::check_json_kernel();
  if (status.ok()) {
    keyshard::set_in_place_policy(in_place);
    if (line.run) status = line.run();
  }
  if (keyshard::Status written = check_stdout_written(); !written.ok() && status.ok()) {
    status = written;
  }
  if (status.ok() || status.quiet()) return status.exit_code();
  std::fprintf(stderr, "keyshard: %s\n", status.message().c_str());
  return status.exit_code();
}
