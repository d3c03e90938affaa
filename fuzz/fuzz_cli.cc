// libFuzzer target: a command line (one argument a line) through the option
// parsing of `paynter simulate` and `paynter sweep` (the run options of
// src/cli/run_options.cc, registered as the program registers them, and the
// texts the program parses once CLI11 has read them: the choices of
// ReadRunOptionCounts, the --param overrides, the output interval, the sweep
// definition) and the other commands' choices (--procedure, --form,
// --constraints, --after). Nothing is run, and no file named on the command
// line is read (a --params table is dropped: fuzz_sweep reads tables).
//
// A usage error (CLI::ParseError: the program prints it, exit 1) and a
// paynter::Error are the expected ends of a bad command line; any other
// exception (the program's "internal error", exit 2), a crash, a sanitizer
// report or a hang is a finding.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../src/cli/commands.h"
#include "paynter/causality.h"
#include "paynter/constrained.h"
#include "paynter/equations.h"
#include "fuzz_common.h"
#include "paynter/error.h"
#include "paynter/pipeline.h"
#include "paynter/run.h"
#include "paynter/solvers.h"
#include "paynter/sweep.h"

namespace {

[[noreturn]] void Finding(const char* what, const std::string& detail) {
  paynter_fuzz::Finding("fuzz_cli", what, detail);
}

void Parse(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  CLI::App app{"paynter"};
  app.require_subcommand(1);

  paynter::RunOptions sim_run;
  std::vector<std::string> sim_params;
  std::string sim_out;
  bool flag = false;
  auto* sim = app.add_subcommand("simulate", "");
  sim->add_option("FILE", sim_run.file)->required();
  AddRunOptions(sim, sim_run);
  sim->add_option("--param", sim_params);
  sim->add_flag("--stats,--no-stabilize", flag);
  sim->add_flag("--energy", sim_run.energy);
  sim->add_option("--parasitic-stiffness", sim_run.parasitic_stiffness);
  sim->add_option("--parasitic-damping", sim_run.parasitic_damping);
  sim->add_option("-o,--output", sim_out)->required();

  paynter::RunOptions sw_run;
  std::vector<std::string> sw_params, sw_log;
  std::string sw_table, sw_out;
  int threads = 0;
  auto* sweep = app.add_subcommand("sweep", "");
  sweep->add_option("FILE", sw_run.file)->required();
  sweep->add_option("--param", sw_params);
  sweep->add_option("--params", sw_table);
  sweep->add_option("--log", sw_log);
  sweep->add_option("--threads", threads)->check(CLI::NonNegativeNumber);
  sweep->add_option("-o,--output", sw_out)->required();
  AddRunOptions(sweep, sw_run);

  std::string file, procedure = "SCAP", form = "state", constraints = "auto", after;
  auto* caus = app.add_subcommand("causality", "");
  caus->add_option("FILE", file)->required();
  caus->add_option("--procedure", procedure);
  caus->add_option("--constraints", constraints);
  auto* eqs = app.add_subcommand("equations", "");
  eqs->add_option("FILE", file)->required();
  eqs->add_option("--form", form);
  eqs->add_option("--constraints", constraints);
  auto* expand = app.add_subcommand("expand", "");
  expand->add_option("FILE", file)->required();
  expand->add_option("--after", after);

  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError&) {
    return;  // a usage error: the program prints it and exits 1
  }
  if (sim->parsed()) {
    ReadRunOptionCounts(sim, sim_run);
    sim_run.params = paynter::ParseParameterOverrides(sim_params, sim_run.file);
    paynter::CheckOutputRows(sim_run);
  } else if (sweep->parsed()) {
    ReadRunOptionCounts(sweep, sw_run);
    const paynter::SweepDefinition def = paynter::DefineSweep(sw_run, sw_params, sw_log, "");
    const long n = def.size();
    for (long k : {0L, n / 2, n - 1}) def.OptionsFor(k);
  } else if (caus->parsed()) {
    paynter::ParseProcedure(procedure);
    paynter::ParseConstraintMethod(constraints);
  } else if (eqs->parsed()) {
    paynter::ParseFormulation(form);
    paynter::ParseConstraintMethod(constraints);
  } else if (expand->parsed() && !after.empty()) {
    paynter::ParseLoadPass(after, file);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args{"paynter"};
  std::string arg;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      args.push_back(arg);
      arg.clear();
    } else {
      arg += static_cast<char>(data[i]);
    }
  }
  if (!arg.empty()) args.push_back(arg);
  try {
    Parse(args);
  } catch (const paynter::Error& e) {
    // Its message is the diagnostic's (the input may be quoted in the rest).
    if (paynter_fuzz::IsInternal(e.diagnostic().message)) Finding("an internal error", e.what());
  } catch (const std::exception& e) {
    Finding("not a paynter::Error (the program's internal error)", e.what());
  } catch (...) {
    Finding("an exception of no std type", "");
  }
  return 0;
}
