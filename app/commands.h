// The subcommands that live in files of their own (app/<name>.cc): each adds
// its subcommand to the program and sets the function that runs it.
#pragma once

#include <functional>

namespace CLI {
class App;
}

CLI::App* AddSweepCommand(CLI::App& app, std::function<int()>* run);  // app/sweep.cc
