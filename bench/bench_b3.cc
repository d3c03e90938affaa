// B3, the quick return mechanism, over 10 s with tau = 2 N m: the time of one
// whole simulation per formulation (Lagrange's equations of the second kind,
// Hamilton's equations, and the state form), at the paper's kind of tolerance
// (ode45 defaults rtol 1e-3, atol 1e-6) and at rtol = atol = 1e-12, beside the
// paper's MATLAB ode45 times (seed 000, section 6: 3.949503 s Lagrange,
// 3.856891 s Hamilton). The compiled code comes from the cache after the first
// run; each figure is the best of the repetitions.
//
// Usage: bench_b3 [repetitions]
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>

#include "paynter/paynter.h"

int main(int argc, char** argv) {
  using namespace paynter;
  const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
  const std::string path = std::string(PAYNTER_SOURCE_DIR) + "/examples/B3_quick_return.yaml";
  fmt::print("B3 quick return, 10 s, tau = 2 N m; best of {} runs (load, causality, equations, compile from cache, "
             "integrate, record 1001 rows)\n",
             reps);
  fmt::print("{:<10} {:>7} {:>8} {:>10} {:>10} {:>12} {:>11} {:>15}\n", "form", "rtol", "steps", "rhs evals",
             "total (s)", "integrate (s)", "MATLAB (s)", "MATLAB/paynter");
  for (Formulation form : {Formulation::kLagrange2, Formulation::kHamilton, Formulation::kState}) {
    for (double tol : {1e-3, 1e-12}) {
      double best = 1e300;
      SolverStats stats;
      for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        Model m = LoadModel(path);
        CausalGraph g = AssignCausality(m, OptionsFor(form, m));
        EquationSystem eqs = BuildEquations(m, g);
        CompiledModel cm(eqs);
        SolverOptions so;
        so.t_end = 10;
        so.rtol = tol;
        so.atol = tol == 1e-3 ? 1e-6 : 1e-12;
        Solution s = Simulate(cm, so);
        const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (sec < best) {
          best = sec;
          stats = s.stats;
        }
      }
      const double matlab = form == Formulation::kLagrange2 ? 3.949503 : form == Formulation::kHamilton ? 3.856891 : 0;
      fmt::print("{:<10} {:>7.0e} {:>8} {:>10} {:>10.4f} {:>13.4f} {:>11} {:>15}\n", FormulationName(form), tol,
                 stats.steps, stats.rhs_evals, best, stats.integrate_seconds,
                 matlab > 0 ? fmt::format("{:.3f}", matlab) : "-",
                 matlab > 0 ? fmt::format("{:.0f}x", matlab / best) : "-");
    }
  }
  return 0;
}
