// paynter report FILE -o report.html [simulate's options]: one self-contained
// HTML page of the model and its run (paynter/html_report.h, docs/report.md).
#include <memory>

#include "commands.h"
#include "paynter/html_report.h"

std::function<int()> AddReportCommand(CLI::App& app, CLI::App** command) {
  struct Args {
    paynter::ReportOptions options;
    std::string out;
    std::vector<std::string> params;
  };
  auto args = std::make_shared<Args>();
  paynter::RunOptions& r = args->options.run;
  auto* c = app.add_subcommand("report", "simulate a model and write an interactive HTML report (one file)");
  c->add_option("FILE", r.file, "model file (YAML)")->required();
  c->add_option("-o,--output", args->out, "HTML file to write")->required();
  c->add_option("--t-end", r.t_end, "end time")->required();
  c->add_option("--t0", r.t0, "start time")->default_val(0.0);
  c->add_option("--method", r.method, "rk4 | dopri5 | bdf")->default_val("dopri5");
  c->add_option("--form", r.form, "state | lagrange1 | lagrange2 | hamilton")->default_val("state");
  c->add_option("--rtol", r.rtol, "relative tolerance")->default_val(1e-6);
  c->add_option("--atol", r.atol, "absolute tolerance")->default_val(1e-9);
  c->add_option("--dt-out", r.dt_out, "output interval (default (t_end - t0)/1000)")->default_val(0.0);
  c->add_option("--step", r.step, "fixed step for rk4")->default_val(1e-3);
  c->add_option("--max-steps", r.max_steps, "step budget (as for simulate)");
  c->add_option("--backend", r.backend, "auto | native | tape")->default_val("auto")
      ->check(CLI::IsMember({"auto", "native", "tape"}));
  c->add_option("--param", args->params, "override a parameter: NAME=VALUE (repeatable)");
  c->add_option("--constraints", r.constraints,
                "mechanisms: auto | lagrange-multipliers | minimal-coordinates | parasitic | zcp")
      ->default_val("auto");
  c->add_option("--procedure", args->options.procedure, "causality procedure of the causality report")
      ->default_val("SCAP");
  c->add_flag("--assemble", r.assemble, "make an inconsistent start consistent, however far off");
  c->add_flag("!--no-cache", r.stage_cache, "build the symbolic stages afresh, without the stage cache");
  *command = c;
  return [args, c] {
    paynter::RunOptions& run = args->options.run;
    run.params = paynter::ParseParameterOverrides(args->params, run.file);
    run.method_given = c->get_option("--method")->count() > 0;
    run.max_steps_given = c->get_option("--max-steps")->count() > 0;
    paynter::WriteHtmlReport(args->options, args->out);
    return 0;
  };
}
