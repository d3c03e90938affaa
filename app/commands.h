// app/commands.h — subcommands kept in files of their own (app/<name>.cc).
#pragma once

#include <CLI/CLI.hpp>

CLI::App* AddSweepCommand(CLI::App& app);  // `paynter sweep` (app/sweep.cc); RunSweepCommand runs it once parsed
int RunSweepCommand();
