// app/commands.h — subcommands kept in files of their own (app/<name>.cc).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <set>
#include <string>

#include "paynter/run.h"

// Each subcommand's options are registered only when it is the one this
// process runs (argv[1]), or for all of them when argv[1] is an option such as
// --help: CLI11's registration of every option of every subcommand took a
// tenth of a small model's whole `paynter simulate` (docs/performance.md).
void SetCommandLine(int argc, char** argv);
bool CommandWanted(const char* name);

// The options of a run as `simulate` takes them (app/run_options.cc), and,
// once parsed, whether --method and --max-steps were given, the choices'
// texts parsed (throws paynter::Error for a bad one), and the model's run
// settings (`simulation:`) for the options not given.
void AddRunOptions(CLI::App* command, paynter::RunOptions& run);
void ReadRunOptionCounts(const CLI::App* command, paynter::RunOptions& run);
// The run settings (paynter::RunSettingNames) whose options were given.
std::set<std::string> GivenRunSettings(const CLI::App* command);

CLI::App* AddFmuCommand(CLI::App& app);  // `paynter fmu` (app/fmu.cc); RunFmuCommand runs it once parsed
int RunFmuCommand();
void RegisterLinearCommands(CLI::App* app);  // linear.cc: `linearize` and `bode`
std::optional<int> RunLinearCommands();      // linear.cc: the exit code when one of them was chosen
std::string LinearCommandFile();             // linear.cc: its model file ("" when neither was chosen)
CLI::App* AddSweepCommand(CLI::App& app);  // `paynter sweep` (app/sweep.cc); RunSweepCommand runs it once parsed
int RunSweepCommand();

// `paynter report`: adds the subcommand to `app`; the function returned runs it
// (after parsing, when the subcommand was given) and returns the exit status.
std::function<int()> AddReportCommand(CLI::App& app, CLI::App** command);
