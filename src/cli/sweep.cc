// paynter sweep: many runs of one model over a grid or a table of parameter
// values, on every core and MPI rank, into one HDF5 or CSV file. The work is
// in paynter/sweep.h; this file reads the command line.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>

#include "commands.h"
#include "paynter/sweep.h"

namespace {

using namespace paynter;

struct SweepArgs {
  RunOptions run;
  std::vector<std::string> params, log;
  std::string table, out;
  bool no_stabilize = false;
  int threads = 0;
};

// The sweep the command line asks for (--param, --log, --params).
SweepDefinition Define(const SweepArgs& a) {
  RunOptions base = a.run;
  base.stabilize = !a.no_stabilize;
  base.progress = false;
  return DefineSweep(base, a.params, a.log, a.table);
}

int Sweep(const SweepArgs& a) {
  MpiSession mpi(nullptr, nullptr);  // MPI only under mpirun
  const bool writer = MpiSession::Rank() == 0;
  try {
    const SweepDefinition def = Define(a);
    std::unique_ptr<SweepSink> out;
    if (writer) out = OpenSweepOutput(a.out, def);
    SweepProgressBar bar(writer);
    SweepSettings settings;
    settings.threads = a.threads;
    settings.progress = [&](long done, long failed, long total) { bar.Update(done, failed, total); };
    const SweepReport r = RunSweep(def, settings, out.get());
    bar.Finish();
    if (!writer) return 0;
    out->Commit();
    std::cerr << fmt::format("paynter: sweep: {} runs, {} failed ({} thread{} x {} rank{}; {}) -> {}\n", r.runs,
                             r.failed, r.threads, r.threads == 1 ? "" : "s", r.ranks, r.ranks == 1 ? "" : "s",
                             r.compiled_once ? "compiled once" : fmt::format("{} runs built on their own", r.own_builds),
                             a.out);
    return 0;  // failed runs are results: the summary records them
  } catch (const Error& e) {
    if (!writer) return 1;  // rank 0 says what went wrong
    const std::string what = e.what();
    if (e.diagnostic().where.file.empty() && what.rfind("<model>", 0) == 0) {
      Diagnostic d = e.diagnostic();
      d.where.file = a.run.file;
      throw Error(std::move(d));
    }
    throw;
  }
}

}  // namespace

namespace {
SweepArgs g_args;             // what the command line gave
CLI::App* g_command = nullptr;
}  // namespace

CLI::App* AddSweepCommand(CLI::App& app) {
  SweepArgs* args = &g_args;
  RunOptions& o = args->run;
  auto* s = g_command = app.add_subcommand("sweep", "simulate a model over a grid or table of parameter values (threads, MPI)");
  if (!CommandWanted("sweep")) return s;
  s->add_option("FILE", o.file, "model file (YAML)")->required();
  s->add_option("--param", args->params,
                "NAME=START:STOP:COUNT (a range; several form a grid, the last fastest) or NAME=VALUE (fixed)");
  s->add_option("--params", args->table, "CSV table: a header of parameter names, one run per row");
  s->add_option("--log", args->log, "space this --param range evenly in the logarithm");
  s->add_option("--threads", args->threads, "threads per process (default: the hardware threads)")
      ->check(CLI::NonNegativeNumber);
  s->add_option("-o,--output", args->out, "results: .h5 / .hdf5 (HDF5) or .csv (+ .summary.csv)")->required();
  // The run options, as simulate takes them.
  AddRunOptions(s, o);
  s->add_flag("--no-stabilize", args->no_stabilize, "lagrange-multipliers: no projection after steps");
  s->add_flag("--energy", o.energy, "add the energy accounting's columns");
  s->add_option("--parasitic-stiffness", o.parasitic_stiffness, "parasitic: stiffness of every joint direction");
  s->add_option("--parasitic-damping", o.parasitic_damping, "parasitic: damping of every joint direction");
  return s;
}

int RunSweepCommand() {
  ReadRunOptionCounts(g_command, g_args.run);
  return Sweep(g_args);
}
