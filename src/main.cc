// keyshard's entry point: parse the command line, run the chosen command, and report. This is
// the only place that prints an error and chooses the exit status.
#include <csignal>
#include <cstdio>

#include <CLI/CLI.hpp>

#include "cli/app.h"

int main(int argc, char** argv) {
  // A closed pipe must show up as EPIPE from write(), not kill the process.
  std::signal(SIGPIPE, SIG_IGN);

  CLI::App app;
  keyshard::CommandLine line;
  keyshard::build_command_line(app, line);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? 0 : keyshard::kExitUsage;
  }

  const keyshard::Status status = line.run ? line.run() : keyshard::Status{};
  if (status.ok() || status.quiet()) return status.exit_code();
  std::fprintf(stderr, "keyshard: %s\n", status.message().c_str());
  return status.exit_code();
}
