// app/fmu.cc — `paynter fmu`: export a model as an FMI 2.0 or 3.0 FMU (docs/fmi.md).
#include <fmt/format.h>

#include <cmath>
#include <iostream>

#include "commands.h"
#include "paynter/error.h"
#include "paynter/fmi.h"

namespace {

struct FmuArgs {
  paynter::FmuOptions options;
  std::string kind = "both";
  std::vector<std::string> params;
};
FmuArgs args;

}  // namespace

CLI::App* AddFmuCommand(CLI::App& app) {
  auto* fmu = app.add_subcommand("fmu", "export the model as an FMI 2.0 or 3.0 FMU (model exchange and co-simulation)");
  if (!CommandWanted("fmu")) return fmu;
  paynter::FmuOptions& o = args.options;
  fmu->add_option("FILE", o.model_file, "model file (YAML)")->required();
  fmu->add_option("-o,--output", o.output, "FMU file to write (.fmu)")->required();
  fmu->add_option("--fmi-version", o.fmi_version, "the FMI standard: 2 (FMI 2.0) or 3 (FMI 3.0)")->default_val(2);
  fmu->add_option("--kind", args.kind, "me | cs | both")->default_val("both")
      ->check(CLI::IsMember({"me", "cs", "both"}));
  fmu->add_option("--form", o.form, "state | lagrange1 | lagrange2 | hamilton (default: lagrange2 for a mechanism "
                                    "under multibody:, else state)");
  fmu->add_option("--constraints", o.constraints, "auto | parasitic")->default_val("auto");
  fmu->add_option("--parasitic-stiffness", o.parasitic_stiffness, "parasitic: stiffness of every joint direction");
  fmu->add_option("--parasitic-damping", o.parasitic_damping, "parasitic: damping of every joint direction");
  fmu->add_option("--param", args.params, "a parameter's value in the FMU: NAME=VALUE (repeatable)");
  fmu->add_option("--method", o.method, "co-simulation integrator: dopri5 | rk4")->default_val("dopri5");
  fmu->add_option("--rtol", o.rtol, "co-simulation: relative tolerance (dopri5)")->default_val(1e-6);
  fmu->add_option("--atol", o.atol, "co-simulation: absolute tolerance (dopri5)")->default_val(1e-9);
  fmu->add_option("--step", o.step, "co-simulation: largest step of rk4")->default_val(1e-3);
  return fmu;
}

int RunFmuCommand() {
  paynter::FmuOptions& o = args.options;
  o.model_exchange = args.kind != "cs";
  o.co_simulation = args.kind != "me";
  for (const auto& [name, value] : paynter::ParseParameterOverrides(args.params, o.model_file)) o.overrides[name] = value;
  const paynter::FmuReport r = paynter::ExportFmu(o);
  std::cout << fmt::format(
      "wrote {} ({} bytes): FMI {}.0 {}, model identifier {}, --form {}\n"
      "{} inputs, {} states, {} outputs, {} parameters ({} tunable, {} calculated); {} {} bytes, "
      "compiled in {:.2f} s\n",
      o.output, r.fmu_bytes, o.fmi_version,
      o.model_exchange && o.co_simulation ? "model exchange and co-simulation"
                                          : o.model_exchange ? "model exchange" : "co-simulation",
      r.model_identifier, r.form, r.num_inputs, r.num_states, r.num_outputs, r.num_parameters, r.num_tunable,
      r.num_calculated, r.library_path, r.library_bytes, r.compile_seconds);
  return 0;
}
