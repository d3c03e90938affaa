// Cost of one right-hand-side evaluation of an N-link chain (or any mechanism
// file) under lagrange-multipliers: the model is loaded and compiled (native
// code from the cache when it is there), then simulated without the projection
// (as `paynter simulate --no-stabilize`) to t_end and to t_end / 4: the
// difference of their thread CPU times over the difference of their
// right-hand-side evaluations is the cost of one evaluation (with the
// integrator's own work per evaluation). Best of the repetitions. Also prints
// the last row (to compare two builds' results), the CPU time of this thread
// to load the model, build its equations and load its code ("build"), and
// that of the C compiler processes ("cc", zero when the code came from the
// cache), and the thread CPU time of one right-hand side by itself at the
// initial state ("rhs", best of 5 batches: the same code without the
// integrator around it), and that of the analysis of the constraints a run
// starts with ("analysis", AnalyzeConstraints: rank and redundant rows).
//
// Usage: bench_chain [--reps R] [--t-end T] [--block-solve auto|dense|sparse] MODEL.yaml ...
// bench/chain_scaling.sh runs it over N = 8 ... 256 and plots the result.
#include <fmt/format.h>
#include <sys/resource.h>
#include <time.h>

#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "paynter/paynter.h"

namespace {

double ThreadSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// CPU time of the finished child processes (the C compiler).
double ChildSeconds() {
  rusage ru;
  getrusage(RUSAGE_CHILDREN, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace paynter;
  int reps = 3;
  double t_end = 2;
  CodegenOptions::BlockSolve block = CodegenOptions::BlockSolve::kAuto;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (a == "--t-end" && i + 1 < argc) {
      t_end = std::atof(argv[++i]);
    } else if (a == "--block-solve" && i + 1 < argc) {
      const std::string b = argv[++i];
      block = b == "dense" ? CodegenOptions::BlockSolve::kDense
              : b == "sparse" ? CodegenOptions::BlockSolve::kSparse
                              : CodegenOptions::BlockSolve::kAuto;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty() || reps < 1) {
    fmt::print(stderr, "usage: bench_chain [--reps R] [--t-end T] [--block-solve auto|dense|sparse] MODEL.yaml ...\n");
    return 2;
  }
  fmt::print("{:<28} {:>10} {:>8} {:>8} {:>10} {:>12} {:>14} {:>10} {:>12}  {}\n", "model", "build (s)", "cc (s)", "steps",
             "rhs evals", "sim cpu (s)", "us per call", "rhs (us)", "analysis (s)", "last row");
  for (const std::string& file : files) {
    try {
      const double b0 = ThreadSeconds(), c0 = ChildSeconds();
      Model model = LoadModel(file, {.method = ConstraintMethod::kLagrangeMultipliers});
      CodegenOptions cg;
      cg.backend = Backend::kNative;
      cg.block_solve = block;
      CompiledModel cm(BuildEquations(model, AssignCausality(model)), cg);
      const double build = ThreadSeconds() - b0, cc = ChildSeconds() - c0;
      // One right-hand side by itself, at the initial state: best of 5 batches
      // of about 50 ms, after a first call (the sparse LU's first pivots).
      ModelWorkspace ws(cm);
      std::vector<double> x = cm.initial_state(), dx(x.size());
      ws.CalcDerivatives(0, x.data(), dx.data());
      double rhs = 1e300;
      for (int batch = 0, calls = 1; batch < 5;) {
        const double t0 = ThreadSeconds();
        for (int i = 0; i < calls; ++i) ws.CalcDerivatives(0, x.data(), dx.data());
        const double sec = ThreadSeconds() - t0;
        if (sec < 0.05) {
          calls *= 2;
          continue;
        }
        rhs = std::min(rhs, sec / calls);
        ++batch;
      }
      const double a0 = ThreadSeconds();
      ModelWorkspace cm_ws(cm);
      const ConstraintAnalysis analysis = AnalyzeConstraints(cm_ws, 0, cm.initial_state());
      const double analysis_sec = ThreadSeconds() - a0;
      if (analysis.redundant()) fmt::print(stderr, "{}: {} redundant constraint(s)\n", file, analysis.constraints - analysis.rank);
      // Best of the repetitions at t_end and at t_end / 4, 1001 output rows
      // each: the difference leaves out what a simulation costs whatever its
      // length (the analysis of the constraints at the start, the rows).
      auto run = [&](double t, Solution* kept) {
        SolverOptions so;
        so.t_end = t;
        ConstrainedOptions co;
        co.method = ConstraintMethod::kLagrangeMultipliers;
        co.stabilize = false;
        co.codegen = cg;
        double best = 1e300;
        for (int r = 0; r < reps; ++r) {
          const double t0 = ThreadSeconds();
          Solution s = SimulateConstrained(cm, so, co);
          const double sec = ThreadSeconds() - t0;
          if (sec < best) best = sec, *kept = std::move(s);
        }
        return best;
      };
      Solution sol, quarter;
      const double cpu = run(t_end, &sol), cpu4 = run(t_end / 4, &quarter);
      const long evals = sol.stats.rhs_evals, evals4 = quarter.stats.rhs_evals;
      std::string last;
      if (!sol.rows.empty())
        for (double v : sol.rows.back()) last += fmt::format("{}{:.17g}", last.empty() ? "" : " ", v);
      fmt::print("{:<28} {:>10.2f} {:>8.2f} {:>8} {:>10} {:>12.4f} {:>14.2f} {:>10.2f} {:>12.3f}  {}\n", file, build, cc,
                 sol.stats.steps, evals, cpu, 1e6 * (cpu - cpu4) / double(evals - evals4), 1e6 * rhs, analysis_sec, last);
    } catch (const Error& e) {
      fmt::print("{:<28} failed: {}\n", file, e.diagnostic().message);
      return 1;
    }
  }
  return 0;
}
