// The overhead of paynter on small models, in process: B1 and B3 (Lagrange's
// equations of the second kind) over 10 s with dopri5, 1001 output rows,
// against the hand-written Dormand–Prince loop of bench/handwritten.h on the
// same equations, the same tolerances and the same rows. paynter's rows go to
// a RowSink that sums them (as the CSV writer receives them, without the
// formatting); the hand-written loop computes the same outputs and sums them.
// Repetitions are interleaved; each figure is the best of them. The largest
// difference between the two runs' rows (relative to the value, or absolute
// below 1) checks that the equations agree.
//
// Usage: bench_overhead [repetitions [model]]   (model: B1 or B3, default both)
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "handwritten.h"
#include "paynter/paynter.h"

namespace {

using namespace paynter;
using Clock = std::chrono::steady_clock;

// Sums every value it is given (so that nothing is optimized away) and keeps
// the rows of the first run for the comparison.
class SumSink : public RowSink {
 public:
  void Begin(const std::vector<std::string>& columns) override { n_ = columns.size(); }
  void Row(const double* v) override {
    for (size_t i = 0; i < n_; ++i) sum += v[i];
    if (keep) rows.emplace_back(v, v + n_);
  }
  double sum = 0;
  bool keep = false;
  std::vector<std::vector<double>> rows;

 private:
  size_t n_ = 0;
};

struct Result {
  double paynter_us = 1e300, memory_us = 1e300, hand_us = 1e300;
  // paynter's dopri5 (Integrate) on the hand-written rhs and outputs: the
  // integrator's own overhead.
  double integrator_us = 1e300;
  long paynter_steps = 0, hand_steps = 0, rows = 0;
  double max_diff = 0;
};

template <class Hand>
Result Measure(const char* file, Formulation form, double rtol, double atol, int reps) {
  Model model = LoadModel(std::string(PAYNTER_SOURCE_DIR) + "/" + file);
  CompiledModel cm(BuildEquations(model, AssignCausality(model, OptionsFor(form, model))));
  SolverOptions so;
  so.t_end = 10;
  so.rtol = rtol;
  so.atol = atol;
  Result res;
  std::vector<std::vector<double>> hand_rows;
  SumSink first;
  first.keep = true;
  res.paynter_steps = Simulate(cm, so, &first).stats.steps;
  double sink_sum = 0;
  for (int r = 0; r < reps; ++r) {
    {
      SumSink sink;
      const auto t0 = Clock::now();
      Simulate(cm, so, &sink);
      res.paynter_us = std::min(res.paynter_us, std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      sink_sum += sink.sum;
    }
    {
      const auto t0 = Clock::now();
      const Solution s = Simulate(cm, so);
      res.memory_us = std::min(res.memory_us, std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      sink_sum += s.rows.back()[1];
    }
    {
      OdeProblem problem;
      problem.n = Hand::kStates;
      problem.rhs = Hand::Rhs;
      std::vector<double> x0(Hand::kStates);
      Hand::Initial(x0.data());
      double o[Hand::kOutputs], sum = 0;
      const auto t0 = Clock::now();
      Integrate(problem, x0, so, [&](double t, const double* y) {
        Hand::Outputs(t, y, o);
        sum += t;
        for (int i = 0; i < Hand::kOutputs; ++i) sum += o[i];
      });
      res.integrator_us =
          std::min(res.integrator_us, std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      sink_sum += sum;
    }
    {
      const bool keep = hand_rows.empty();
      const auto t0 = Clock::now();
      double x[Hand::kStates], o[Hand::kOutputs], sum = 0;
      Hand::Initial(x);
      const handwritten::Stats st = handwritten::Dopri5<Hand::kStates>(
          Hand::Rhs, x, 0.0, so.t_end, rtol, atol, 0.01, [&](double t, const double* y) {
            Hand::Outputs(t, y, o);
            sum += t;
            for (int i = 0; i < Hand::kOutputs; ++i) sum += o[i];
            if (keep) {
              hand_rows.emplace_back(1, t);
              hand_rows.back().insert(hand_rows.back().end(), o, o + Hand::kOutputs);
            }
          });
      res.hand_us = std::min(res.hand_us, std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      res.hand_steps = st.steps;
      sink_sum += sum;
    }
  }
  res.rows = static_cast<long>(first.rows.size());
  if (hand_rows.size() != first.rows.size()) {
    res.max_diff = INFINITY;
  } else {
    for (size_t i = 0; i < hand_rows.size(); ++i)
      for (size_t c = 0; c < hand_rows[i].size() && c < first.rows[i].size(); ++c)
        res.max_diff = std::max(
            res.max_diff, std::fabs(hand_rows[i][c] - first.rows[i][c]) / std::max(1.0, std::fabs(first.rows[i][c])));
  }
  if (sink_sum == 0.12345) fmt::print("");  // keeps the sums alive
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 100;
  const std::string only = argc > 2 ? argv[2] : "";
  fmt::print("In process: 10 s, dopri5, 1001 rows; best of {} interleaved repetitions\n", reps);
  fmt::print("{:<14} {:>6} {:>13} {:>6} {:>11} {:>11} {:>11} {:>11} {:>7} {:>7} {:>7} {:>12}\n", "model", "rtol",
             "steps p/h", "rows", "paynter us", "memory us", "dopri5 us", "hand us", "ratio", "memory", "dopri5",
             "max rel diff");
  struct Case {
    const char* name;
    const char* file;
    Formulation form;
    double rtol, atol;
    bool b3;
  };
  const Case cases[] = {
      {"B1", "examples/B1_pendulum.yaml", Formulation::kState, 1e-6, 1e-9, false},
      {"B1", "examples/B1_pendulum.yaml", Formulation::kState, 1e-10, 1e-12, false},
      {"B3 lagrange2", "examples/B3_quick_return.yaml", Formulation::kLagrange2, 1e-6, 1e-9, true},
      {"B3 lagrange2", "examples/B3_quick_return.yaml", Formulation::kLagrange2, 1e-10, 1e-12, true},
  };
  for (const Case& c : cases) {
    if (!only.empty() && std::string(c.name).rfind(only, 0) != 0) continue;
    const Result r = c.b3 ? Measure<handwritten::B3>(c.file, c.form, c.rtol, c.atol, reps)
                          : Measure<handwritten::B1>(c.file, c.form, c.rtol, c.atol, reps);
    fmt::print(
        "{:<14} {:>6.0e} {:>6}/{:<6} {:>6} {:>11.1f} {:>11.1f} {:>11.1f} {:>11.1f} {:>7.2f} {:>7.2f} {:>7.2f} "
        "{:>12.1e}\n",
        c.name, c.rtol, r.paynter_steps, r.hand_steps, r.rows, r.paynter_us, r.memory_us, r.integrator_us, r.hand_us,
        r.paynter_us / r.hand_us, r.memory_us / r.hand_us, r.integrator_us / r.hand_us, r.max_diff);
  }
  fmt::print(
      "ratio: paynter (rows to a sink) / hand-written; memory: paynter (rows kept in a Solution) / hand-written;\n"
      "dopri5: paynter's Integrate on the hand-written rhs and outputs / hand-written (the integrator's overhead)\n");
  return 0;
}
