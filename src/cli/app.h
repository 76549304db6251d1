// The command line: one CLI11 app with a subcommand per job. main() parses with it, then runs
// the chosen command; each command returns a Status for main to report.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

#include "cli/options.h"
#include "util/status.h"

namespace keyshard {

struct CommandLine {
  SplitOptions split;
  StatsOptions stats;
  PlanOptions plan;
  WhichOptions which;
  ResumeOptions resume;
  VerifyOptions verify;
  std::function<Status()> run;  // set by the subcommand that was chosen
};

/// Declares every subcommand and option on `app`, bound to `line`.
void build_command_line(CLI::App& app, CommandLine& line);

/// The --version text: keyshard's version and those of its main libraries.
std::string version_text();

/// Accepts a decimal whole number from `low` to `high` (leading zeros are decimal too).
CLI::Validator decimal_in(uint64_t low, uint64_t high);

/// Refuses an empty value with `refusal` (an option given as '' would otherwise read as one not
/// given at all).
CLI::Validator not_empty(std::string refusal);

/// Refuses, with `refusal`, a value that is empty or only whitespace.
CLI::Validator not_blank(std::string refusal);

// The input, key and partitioning options shared by split, stats and plan.
void add_input_options(CLI::App& app, SplitOptions& options);
void add_key_options(CLI::App& app, SplitOptions& options);
void add_salt_options(CLI::App& app, SplitOptions& options);
void add_progress_options(CLI::App& app, SplitOptions& options);
void add_progress_options(CLI::App& app, bool& show, bool& hide);
void add_partitioning_options(CLI::App& app, SplitOptions& options, bool with_partitions = true);

// Each subcommand's declaration lives beside its implementation.
CLI::App* add_split_command(CLI::App& app, SplitOptions& options);
Status run_split(const SplitOptions& options);
CLI::App* add_resume_command(CLI::App& app, ResumeOptions& options);
Status run_resume(const ResumeOptions& options);
CLI::App* add_verify_command(CLI::App& app, VerifyOptions& options);
Status run_verify(const VerifyOptions& options);
CLI::App* add_stats_command(CLI::App& app, StatsOptions& options);
Status run_stats(const StatsOptions& options);
CLI::App* add_plan_command(CLI::App& app, PlanOptions& options);
Status run_plan(const PlanOptions& options);
CLI::App* add_which_command(CLI::App& app, WhichOptions& options);
Status run_which(const WhichOptions& options);

}  // namespace keyshard
