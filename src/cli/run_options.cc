// The options every command that runs a model takes, as `simulate` takes them.
#include "commands.h"

#include <cstring>
#include <map>
#include <string>

namespace {
const char* g_command = nullptr;  // argv[1] when it names a subcommand's place; null: every one is wanted
}  // namespace

void SetCommandLine(int argc, char** argv) {
  g_command = argc >= 2 && argv[1][0] != '-' ? argv[1] : nullptr;
}

bool CommandWanted(const char* name) { return !g_command || std::strcmp(g_command, name) == 0; }

namespace {
// The choices as the command line gives them, parsed into RunOptions' enums
// by ReadRunOptionCounts (with the messages of the Parse functions).
struct RunTexts {
  std::string method, form, backend, block_solve, constraints;
};
std::map<const CLI::App*, RunTexts>& Texts() {
  static std::map<const CLI::App*, RunTexts> texts;
  return texts;
}
}  // namespace

void AddRunOptions(CLI::App* c, paynter::RunOptions& r) {
  RunTexts& t = Texts()[c];
  c->add_option("--t-end", r.t_end, "end time (default: the model's simulation: t_end)");
  c->add_option("--t0", r.t0, "start time")->default_val(0.0);
  c->add_option("--method", t.method, "rk4 | dopri5 | bdf")->default_val("dopri5");
  c->add_option("--form", t.form, "state | lagrange1 | lagrange2 | hamilton | boltzmann-hamel")->default_val("state");
  c->add_option("--rtol", r.rtol, "relative tolerance")->default_val(1e-6);
  c->add_option("--atol", r.atol, "absolute tolerance")->default_val(1e-9);
  c->add_option("--dt-out", r.dt_out, "output interval (default (t_end - t0)/1000)")->default_val(0.0);
  c->add_option("--step", r.step, "fixed step for rk4")->default_val(1e-3);
  c->add_option("--max-steps", r.max_steps,
                "step budget of a run (default 50000000; dopri5 stops a stiff run that needs more than 100000)");
  c->add_option("--backend", t.backend,
                "tiered (= auto: the tape until the native code is compiled) | native (wait for it) | tape")
      ->default_val("auto")
      ->check(CLI::IsMember({"auto", "tiered", "native", "tape"}));
  c->add_option("--block-solve", t.block_solve, "implicit blocks: auto (sparse LU for large sparse blocks) | dense | sparse")
      ->default_val("auto")
      ->check(CLI::IsMember({"auto", "dense", "sparse"}));
  c->add_option("--constraints", t.constraints,
                "mechanisms: auto | lagrange-multipliers | minimal-coordinates | parasitic | zcp")
      ->default_val("auto");
  c->add_flag("--assemble", r.assemble, "make an inconsistent start consistent, however far off");
  c->add_option("--drift-tolerance", r.drift_tolerance,
                "mechanisms: the largest constraint drift an output may show before the run stops (0: no check; "
                "default: the larger of 1e-6 and 10 rtol)")
      ->check(CLI::NonNegativeNumber);
  c->add_flag("--project-energy,!--no-project-energy", r.project_energy,
              "lagrange-multipliers: keep the energy balance by scaling the momenta after each step (adds the "
              "--energy columns; docs/constraints.md)");
  c->add_flag("!--no-cache", r.stage_cache, "build the symbolic stages afresh, without the stage cache");
}

std::set<std::string> GivenRunSettings(const CLI::App* c) {
  std::set<std::string> given;
  for (const std::string& name : paynter::RunSettingNames()) {
    std::string option = "--" + name;
    for (char& ch : option)
      if (ch == '_') ch = '-';
    const CLI::Option* o = c->get_option_no_throw(option);
    if (o && o->count() > 0) given.insert(name);
  }
  return given;
}

void ReadRunOptionCounts(const CLI::App* c, paynter::RunOptions& r) {
  r.method_given = c->get_option("--method")->count() > 0;
  r.max_steps_given = c->get_option("--max-steps")->count() > 0;
  const RunTexts& t = Texts()[c];
  r.method = paynter::ParseMethod(t.method);
  r.form = paynter::ParseFormulation(t.form);
  r.backend = paynter::ParseBackend(t.backend);
  r.block_solve = paynter::ParseBlockSolve(t.block_solve);
  r.constraints = paynter::ParseConstraintMethod(t.constraints);
  paynter::ApplyModelSettings(r, GivenRunSettings(c));
}
