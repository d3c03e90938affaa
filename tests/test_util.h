// Helpers for whole-model tests.
#pragma once

#include <string>

#include "paynter/paynter.h"

namespace paynter::testing {

inline std::string SourcePath(const std::string& rel) { return std::string(PAYNTER_SOURCE_DIR) + "/" + rel; }

struct Run {
  Model model;
  EquationSystem equations;
  Solution solution;
};

inline Run SimulateModel(Model model, double t_end, double rtol = 1e-10, double atol = 1e-12,
                         Method method = Method::kDopri5, double dt_out = 0, Backend backend = Backend::kAuto) {
  Run r{std::move(model), {}, {}};
  CausalGraph g = AssignCausality(r.model);
  r.equations = BuildEquations(r.model, g);
  CodegenOptions cg;
  cg.backend = backend;
  CompiledModel cm(r.equations, cg);
  SolverOptions so;
  so.method = method;
  so.t_end = t_end;
  so.rtol = rtol;
  so.atol = atol;
  so.dt_out = dt_out;
  r.solution = Simulate(cm, so);
  return r;
}

inline Run SimulateYaml(const std::string& yaml, double t_end, double rtol = 1e-10, double atol = 1e-12) {
  return SimulateModel(LoadModelFromString(yaml, "test.yaml"), t_end, rtol, atol);
}

inline Run SimulateFile(const std::string& rel, double t_end, double rtol = 1e-10, double atol = 1e-12) {
  return SimulateModel(LoadModel(SourcePath(rel)), t_end, rtol, atol);
}

}  // namespace paynter::testing
