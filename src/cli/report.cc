// paynter report FILE -o report.html [simulate's options]: one self-contained
// HTML page of the model and its run (paynter/html_report.h, docs/report.md).
#include <memory>

#include "commands.h"
#include "paynter/html_report.h"

std::function<int()> AddReportCommand(CLI::App& app, CLI::App** command) {
  struct Args {
    paynter::ReportOptions options;
    std::string out, procedure;
    std::vector<std::string> params;
  };
  auto args = std::make_shared<Args>();
  paynter::RunOptions& r = args->options.run;
  auto* c = app.add_subcommand("report", "simulate a model and write an interactive HTML report (one file)");
  *command = c;
  if (!CommandWanted("report")) return [] { return 0; };  // never run: another subcommand was chosen
  c->add_option("FILE", r.file, "model file (YAML)")->required();
  c->add_option("-o,--output", args->out, "HTML file to write")->required();
  AddRunOptions(c, r);
  c->add_option("--param", args->params, "override a parameter: NAME=VALUE (repeatable)");
  c->add_option("--procedure", args->procedure, "causality procedure of the causality report")
      ->default_val("SCAP");
  *command = c;
  return [args, c] {
    paynter::RunOptions& run = args->options.run;
    run.params = paynter::ParseParameterOverrides(args->params, run.file);
    ReadRunOptionCounts(c, run);
    args->options.procedure = paynter::ParseProcedure(args->procedure);
    paynter::WriteHtmlReport(args->options, args->out);
    return 0;
  };
}
