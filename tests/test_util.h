// Helpers for whole-model tests.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "paynter/paynter.h"
#include "test_files.h"
#include "test_paths.h"

namespace paynter::testing {

inline std::string SourcePath(const std::string& rel) { return std::string(PAYNTER_SOURCE_DIR) + "/" + rel; }

// A bound on how long something takes tells "at once" from "minutes or
// hours", not this machine's speed: the hostile tests take it on CPU time
// (a loaded machine does not stretch it) and widen it by kSlowdown under
// AddressSanitizer, whose instrumentation costs 3-10x.
#ifdef __SANITIZE_ADDRESS__
inline constexpr double kSlowdown = 10.0;
#else
inline constexpr double kSlowdown = 1.0;
#endif

// CPU seconds (user + system) of the child processes waited for so far.
inline double ChildrenCpuSeconds() {
  rusage u{};
  ::getrusage(RUSAGE_CHILDREN, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

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

// A source tree file's bytes (a path relative to the tree).
inline std::string ReadSourceFile(const std::string& rel) { return ReadFileBytes(SourcePath(rel)); }

// Sets an environment variable (unsets it for a null value) for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_) ::setenv(name_.c_str(), old_.c_str(), 1);
    else ::unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

// A circuit with an implicit block (a resistor whose effort law a*f + b*f^3
// is inverted by Newton), written to `path`.
inline void WriteNonlinearResistorModel(const std::filesystem::path& path) {
  std::ofstream(path) << "name: nonlinear\n"
                         "parameters: {V: 2, L: 0.5, C: 0.1, a: 1, b: 0.5}\n"
                         "elements:\n"
                         "  - {name: src, kind: Se, effort: V*sin(3*t)}\n"
                         "  - {name: j1, kind: '1'}\n"
                         "  - {name: coil, kind: I, inertance: L}\n"
                         "  - {name: j0, kind: '0'}\n"
                         "  - {name: cap, kind: C, capacitance: C}\n"
                         "  - {name: res, kind: R, effort: a*f + b*f^3}\n"
                         "bonds: [[src, j1], [j1, coil], [j1, j0], [j0, cap], [j0, res]]\n"
                         "outputs: {i: f_coil, v: e_cap, ir: f_res}\n";
}

// Removes a directory tree that a detached native-code build (a cold run's,
// which outlives the run) may still be writing into: retried until it is gone.
inline void RemoveTree(const std::filesystem::path& path) {
  std::error_code ec;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::filesystem::remove_all(path, ec);
    if (!std::filesystem::exists(path, ec)) return;
    ::usleep(50000);
  }
}

}  // namespace paynter::testing
