// Helpers for whole-model tests.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
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

// A file's bytes ("" when it cannot be read).
inline std::string ReadFileBytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// Writes `text` to `p`, creating its directory.
inline void WriteFileBytes(const std::filesystem::path& p, const std::string& text) {
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

struct CommandResult {
  int code;         // the exit status (-1 when it did not exit)
  std::string out;  // stdout and stderr
};

// Runs a shell command line written by the test, stderr with stdout.
inline CommandResult RunCommand(const std::string& command) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace paynter::testing
