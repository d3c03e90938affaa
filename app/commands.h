// app/commands.h — subcommands kept in files of their own (app/<name>.cc).
#pragma once

#include <CLI/CLI.hpp>

CLI::App* AddFmuCommand(CLI::App& app);  // `paynter fmu` (app/fmu.cc); RunFmuCommand runs it once parsed
int RunFmuCommand();
