// paynter's subcommands that live in files of their own (app/<name>.cc).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

// `paynter report`: adds the subcommand to `app`; the function returned runs it
// (after parsing, when the subcommand was given) and returns the exit status.
std::function<int()> AddReportCommand(CLI::App& app, CLI::App** command);
