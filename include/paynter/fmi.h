// paynter/fmi.h — export of a model as a Functional Mock-up Unit (FMI 2.0 or 3.0).
//
// The FMU holds modelDescription.xml, the generated C (sources/) and the shared
// object compiled from it (binaries/linux64/<identifier>.so for FMI 2.0,
// binaries/x86_64-linux/ for FMI 3.0 on 64-bit x86), which needs libc
// and libm only: the right-hand side and outputs, the implicit blocks' Newton
// solves (dense LU) and, for co-simulation, its own integrator. docs/fmi.md
// says what is supported.
#pragma once

#include <map>
#include <string>

namespace paynter {

struct FmuOptions {
  std::string model_file;  // the model (YAML)
  std::string output;      // the .fmu, written atomically
  int fmi_version = 2;     // 2 or 3: the standard the FMU follows
  bool model_exchange = true, co_simulation = true;
  // Empty: lagrange2 for a mechanism written under `multibody:` (joint
  // coordinates), state for a bond graph. Otherwise as `simulate --form`.
  std::string form;
  // auto (the model must have no constraint sources) or parasitic.
  std::string constraints = "auto";
  double parasitic_stiffness = 0, parasitic_damping = 0;
  std::map<std::string, double> overrides;  // --param: applied before anything is derived
  // Co-simulation: the integrator inside fmi2DoStep.
  std::string method = "dopri5";  // dopri5 | rk4
  double rtol = 1e-6, atol = 1e-9;  // dopri5 (fmi2SetupExperiment's tolerance replaces rtol)
  double step = 1e-3;               // rk4: largest step
};

struct FmuReport {
  std::string model_identifier, guid, form;
  std::string library_path;  // the shared object's path in the FMU
  int num_states = 0, num_outputs = 0, num_inputs = 0;
  // Parameters (the inputs not counted): tunable ones, calculated (derived) ones.
  int num_parameters = 0, num_tunable = 0, num_calculated = 0;
  double compile_seconds = 0;  // the C compiler's run
  long library_bytes = 0;      // the shared object's size
  long fmu_bytes = 0;
};

// Writes the FMU. Throws Error (unknown model, a model the FMU cannot run
// alone, no C compiler, a file that cannot be written); on error no file
// appears at options.output.
FmuReport ExportFmu(const FmuOptions& options);

}  // namespace paynter
