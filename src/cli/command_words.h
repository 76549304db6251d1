// The words of the command line as keyshard reads them before CLI11 parses them: the help asked
// for, values CLI11 would misread, long options written with one dash, and the "--" that ends
// the options.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace keyshard {

/// Whether -h or --help comes before the options end, other than as an option's value.
bool help_requested(CLI::App& app, int argc, char** argv);

/// "--hash=" or "-n=8", which CLI11 would misread: what to type instead.
std::optional<std::string> misspelt_value(int argc, char** argv);

/// A long option written with one dash ("-key user_id"): what to type instead.
std::optional<std::string> one_dash_long_option(CLI::App& app, int argc, char** argv);

/// The index of the "--" that ends the options of a command whose operands are a list (split's
/// inputs, which's keys) when an operand comes before it, else argc. CLI11 honours a "--" only
/// before the first operand: the words after this one are to be taken from the line and given
/// to add_operands() once it has parsed the rest. A "--" that is an option's value (-k --, the
/// key "--") ends nothing.
int options_end(CLI::App& app, int argc, char** argv);

/// Appends `words`, each as it stands, to the operands of the command that was parsed.
void add_operands(CLI::App& app, const std::vector<std::string>& words);

}  // namespace keyshard
