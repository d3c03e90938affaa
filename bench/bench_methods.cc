// B1 and B2 by each method for constrained mechanisms (docs/constraints.md):
// the time of one whole 10 s simulation (load, equations, compile from the
// cache, assemble, integrate, record 1001 rows), best of the repetitions,
// beside the 20-sim times of Boudon et al. 2019 (Tables 1 and 5: pendulum
// with vector bonds ZCP 0.045 s, R/C 0.145 s, MSe 0.050 s, minimal
// coordinates 0.015 s; slider crank: hyperstatic R/C 0.45-0.5 s, isostatic
// R/C 0.4-0.51 s, MSe 0.30-0.33 s, minimal coordinates 0.19 s, ZCP "hard to
// conduct" on both; their machine and tolerances are not given). The ratio
// column is each method's time over minimal coordinates' in this run.
//
// Usage: bench_methods [repetitions] [rtol]
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <map>

#include "paynter/paynter.h"

int main(int argc, char** argv) {
  using namespace paynter;
  const int reps = argc > 1 ? std::atoi(argv[1]) : 3;
  const double rtol = argc > 2 ? std::atof(argv[2]) : 1e-6;
  const std::string dir = std::string(PAYNTER_SOURCE_DIR) + "/examples/";
  struct Case {
    const char* file;
    std::map<ConstraintMethod, const char*> paper;
  };
  const Case cases[] = {
      {"B1_pendulum_3d.yaml",
       {{ConstraintMethod::kZcp, "0.045"}, {ConstraintMethod::kParasitic, "0.145"},
        {ConstraintMethod::kLagrangeMultipliers, "0.050"}, {ConstraintMethod::kMinimalCoordinates, "0.015"}}},
      {"B2_slider_crank_hyperstatic.yaml",
       {{ConstraintMethod::kParasitic, "0.45-0.5"}}},
      {"B2_slider_crank_isostatic.yaml",
       {{ConstraintMethod::kZcp, "hard"}, {ConstraintMethod::kParasitic, "0.4-0.51"},
        {ConstraintMethod::kLagrangeMultipliers, "0.30-0.33"}, {ConstraintMethod::kMinimalCoordinates, "0.19"}}},
  };
  fmt::print("10 s runs, rtol {:g} (atol 1e-3 rtol), best of {}; parasitic with BDF, zcp with IDA, others dopri5\n",
             rtol, reps);
  fmt::print("{:<34} {:<22} {:>8} {:>10} {:>11} {:>13} {:>8} {:>10}\n", "model", "method", "steps", "rhs evals",
             "total (s)", "integrate (s)", "/ min.", "20-sim (s)");
  for (const Case& c : cases) {
    double reference = 0;
    for (ConstraintMethod m : {ConstraintMethod::kMinimalCoordinates, ConstraintMethod::kLagrangeMultipliers,
                               ConstraintMethod::kZcp, ConstraintMethod::kParasitic}) {
      double best = 1e300;
      Solution sol;
      for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        Model model = LoadModel(dir + c.file, {.method = m});
        CompiledModel cm(BuildEquations(model, AssignCausality(model)));
        SolverOptions so;
        so.t_end = 10;
        so.rtol = rtol;
        so.atol = 1e-3 * rtol;
        if (m == ConstraintMethod::kParasitic) so.method = Method::kBDF;
        ConstrainedOptions co;
        co.method = m;
        co.source = &model;
        Solution s = SimulateConstrained(cm, so, co);
        const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (sec < best) best = sec, sol = std::move(s);
      }
      if (m == ConstraintMethod::kMinimalCoordinates) reference = best;
      const auto paper = c.paper.find(m);
      fmt::print("{:<34} {:<22} {:>8} {:>10} {:>11.4f} {:>13.4f} {:>8.2f} {:>10}\n", c.file, ConstraintMethodName(m),
                 sol.stats.steps, sol.stats.rhs_evals, best, sol.stats.integrate_seconds, best / reference,
                 paper == c.paper.end() ? "-" : paper->second);
    }
  }
  return 0;
}
