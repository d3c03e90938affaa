// The subcommands defined outside paynter_main.cc, one line each.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

void RegisterLinearCommands(CLI::App* app);  // linear.cc: `linearize` and `bode`
std::optional<int> RunLinearCommands();      // linear.cc: the exit code when one of them was chosen
std::string LinearCommandFile();             // linear.cc: its model file ("" when neither was chosen)
