// Linear analysis of a closed loop (docs/linear.md, "Loops"): the loop gain at
// a cut, its gain and phase margins and the closed-loop poles of the
// PI-controlled DC motor (examples/dc_motor_speed_control.yaml), against the
// loop transfer function derived by hand from the example's parameters; the
// same loop with a measurement delay (examples/dc_motor_delayed_control.yaml)
// for a finite gain margin; and the errors of a cut that is no signal.
#include <gtest/gtest.h>
#include <unistd.h>

#include <Eigen/Dense>
#include <cmath>
#include <complex>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <vector>

#include "test_util.h"

namespace paynter {
namespace {

using cd = std::complex<double>;

// The plant of the example, load speed over supply voltage, by hand: the
// armature L di/dt = V - R i - k N w, the motor's rotor and friction
// reflected through the gear (w_motor = N w): J_eq = J_load + N^2 J_m,
// b_eq = b_load + N^2 b_m, J_eq dw/dt = N k i - b_eq w. So
//   P(s) = N k / ((L s + R)(J_eq s + b_eq) + (N k)^2).
struct Motor {
  double R = 1.2, L = 2e-3, k = 0.06, Jm = 2e-5, bm = 1e-6, N = 5, Jl = 4e-3, bl = 2e-3;
  double kp = 0.5, ki = 10;
  double Jeq() const { return Jl + N * N * Jm; }
  double beq() const { return bl + N * N * bm; }
  cd Plant(cd s) const { return N * k / ((L * s + R) * (Jeq() * s + beq()) + (N * k) * (N * k)); }
  cd Pi(cd s) const { return kp + ki / s; }
  cd Loop(cd s) const { return Pi(s) * Plant(s); }
  // The closed loop's characteristic polynomial s ((L s + R)(J s + b) + (N k)^2) + N k (kp s + ki),
  // coefficients of s^3 ... s^0.
  std::vector<double> ClosedLoop() const {
    const double J = Jeq(), b = beq(), G = N * k;
    return {L * J, L * b + R * J, R * b + G * G + G * kp, G * ki};
  }
};

// The Pade approximant of order n of e^(-sT), D(-s)/D(s) with
// D(s) = sum_k (2n-k)! n! / ((2n)! k! (n-k)!) (sT)^k.
cd Pade(cd s, double T, int n) {
  auto fact = [](int m) { return std::tgamma(m + 1.0); };
  cd num = 0, den = 0;
  for (int k = 0; k <= n; ++k) {
    const double c = fact(2 * n - k) * fact(n) / (fact(2 * n) * fact(k) * fact(n - k));
    den += c * std::pow(s * T, k);
    num += c * std::pow(-s * T, k);
  }
  return num / den;
}

// The root of f in [a, b] (opposite signs at the ends), by bisection.
double Bisect(const std::function<double(double)>& f, double a, double b) {
  double fa = f(a);
  for (int i = 0; i < 200 && b - a > 1e-15 * b; ++i) {
    const double c = 0.5 * (a + b), fc = f(c);
    if ((fc < 0) == (fa < 0)) {
      a = c;
      fa = fc;
    } else {
      b = c;
    }
  }
  return 0.5 * (a + b);
}

// The crossovers of an analytic loop gain in [w0, w1]: (w, PM deg) where
// |L| = 1 and (w, GM dB) where Im L = 0 with Re L < 0, bracketed on a grid of
// 2000 points per decade and refined by bisection.
void AnalyticCrossovers(const std::function<cd(cd)>& L, double w0, double w1, std::vector<std::pair<double, double>>* gain,
                        std::vector<std::pair<double, double>>* phase) {
  const int n = static_cast<int>(2000 * std::log10(w1 / w0));
  auto mag = [&](double w) { return std::abs(L(cd(0, w))) - 1; };
  auto im = [&](double w) { return L(cd(0, w)).imag(); };
  for (int i = 0; i < n; ++i) {
    const double a = w0 * std::pow(w1 / w0, double(i) / n), b = w0 * std::pow(w1 / w0, double(i + 1) / n);
    if ((mag(a) < 0) != (mag(b) < 0)) {
      const double w = Bisect(mag, a, b);
      gain->push_back({w, std::arg(-L(cd(0, w))) * 180 / M_PI});
    }
    if ((im(a) < 0) != (im(b) < 0)) {
      const double w = Bisect(im, a, b);
      if (L(cd(0, w)).real() < 0) phase->push_back({w, -20 * std::log10(std::abs(L(cd(0, w))))});
    }
  }
}

double Rel(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-300); }

LinearizedModel LoopOf(const std::string& file, const std::string& cut) {
  OperatingPointOptions o;
  o.file = file;
  o.loop_at = cut;
  return LinearizeModel(o);
}

// The eigenvalues of a square matrix given as a paynter Matrix.
std::vector<cd> Eigenvalues(const Eigen::MatrixXd& M) {
  Eigen::EigenSolver<Eigen::MatrixXd> es(M, false);
  std::vector<cd> out(es.eigenvalues().data(), es.eigenvalues().data() + M.rows());
  std::sort(out.begin(), out.end(), [](cd a, cd b) { return a.real() != b.real() ? a.real() < b.real() : a.imag() < b.imag(); });
  return out;
}

Eigen::MatrixXd ToEigen(const Matrix& m) {
  Eigen::MatrixXd e(m.rows, m.cols);
  for (int i = 0; i < m.rows; ++i)
    for (int j = 0; j < m.cols; ++j) e(i, j) = m(i, j);
  return e;
}

TEST(Loop, PiMotorLoopGainMarginsAndPolesAgainstTheClosedForm) {
  const Motor mo;
  const LinearizedModel r = LoopOf(testing::SourcePath("examples/dc_motor_speed_control.yaml"), "ctl.u");
  ASSERT_TRUE(r.loop);
  const LinearModel& open = r.loop->open;
  std::printf("%s", LoopText(r).c_str());
  // The loop gain: plant x PI at every frequency.
  double worst = 0;
  for (double w = 0.01; w < 1e5; w *= 1.37) {
    const cd exact = mo.Loop(cd(0, w)), got = FrequencyResponse(open, 0, 0, w);
    worst = std::max(worst, std::abs(got - exact) / std::abs(exact));
  }
  std::printf("  loop gain: largest relative difference to C(s) P(s) %.3g\n", worst);
  EXPECT_LT(worst, 1e-10);
  // Margins: one gain crossover; the phase tends to -180 deg from above
  // without reaching it (a PI zero against two plant poles), so no gain margin.
  std::vector<std::pair<double, double>> gain, phase;
  AnalyticCrossovers([&](cd s) { return mo.Loop(s); }, r.loop->margins.w0, r.loop->margins.w1, &gain, &phase);
  ASSERT_EQ(gain.size(), 1u);
  EXPECT_TRUE(phase.empty());
  ASSERT_TRUE(r.loop->margins.phase_margin);
  ASSERT_EQ(r.loop->margins.gain_crossovers.size(), 1u);
  EXPECT_TRUE(r.loop->margins.phase_crossovers.empty());
  EXPECT_FALSE(r.loop->margins.gain_margin);
  std::printf("  crossover %.9g rad/s (by hand %.9g), phase margin %.9g deg (by hand %.9g)\n",
              r.loop->margins.phase_margin->w, gain[0].first, r.loop->margins.phase_margin->margin, gain[0].second);
  EXPECT_LT(Rel(r.loop->margins.phase_margin->w, gain[0].first), 1e-6);
  EXPECT_LT(Rel(r.loop->margins.phase_margin->margin, gain[0].second), 1e-6);
  // Closed-loop poles: the eigenvalues of the closed loop's A are the roots
  // of its characteristic polynomial (a cubic: current, speed, integral).
  const std::vector<double> p = mo.ClosedLoop();
  ASSERT_EQ(r.lin.A.rows, 3);
  Eigen::MatrixXd companion = Eigen::MatrixXd::Zero(3, 3);
  for (int j = 0; j < 3; ++j) companion(0, j) = -p[j + 1] / p[0];
  companion(1, 0) = companion(2, 1) = 1;
  const auto roots = Eigenvalues(companion), poles = Eigenvalues(ToEigen(r.lin.A));
  for (int i = 0; i < 3; ++i) {
    std::printf("  closed-loop pole %.9g%+.9gj (root %.9g%+.9gj)\n", poles[i].real(), poles[i].imag(), roots[i].real(),
                roots[i].imag());
    EXPECT_LT(std::abs(poles[i] - roots[i]) / std::abs(roots[i]), 1e-9);
  }
  // The loop opened and closed again, u = signal = -C x - D u: the same poles.
  const Eigen::MatrixXd A = ToEigen(open.A), B = ToEigen(open.B), C = ToEigen(open.C);
  const auto reclosed = Eigenvalues(A - B * C / (1 + open.D(0, 0)));
  for (int i = 0; i < 3; ++i) EXPECT_LT(std::abs(reclosed[i] - roots[i]) / std::abs(roots[i]), 1e-9);
  // The same loop cut where the supply reads the controller's output: the
  // same loop gain. (At ctl.y itself the anti-windup's (y - v)/Tt, which
  // reads y too, would be opened as well: another loop gain.)
  const LinearizedModel y = LoopOf(testing::SourcePath("examples/dc_motor_speed_control.yaml"), "supply.V");
  for (double w : {0.1, 3.0, 29.6, 500.0}) {
    const cd a = FrequencyResponse(open, 0, 0, w), b = FrequencyResponse(y.loop->open, 0, 0, w);
    EXPECT_LT(std::abs(a - b) / std::abs(a), 1e-12) << w;
  }
  EXPECT_LT(Rel(y.loop->margins.phase_margin->margin, gain[0].second), 1e-6);
}

// With the speed measured 10 ms late through a Pade approximant of order 3,
// the loop gain is C(s) P(s) R33(s): the same gain crossover, less phase
// margin, and two phase crossovers, the first one the gain margin.
TEST(Loop, DelayedMeasurementGivesAGainMargin) {
  const Motor mo;
  const double T = 0.01;
  const LinearizedModel r = LoopOf(testing::SourcePath("examples/dc_motor_delayed_control.yaml"), "ctl.u");
  ASSERT_TRUE(r.loop);
  std::printf("%s", LoopText(r).c_str());
  auto L = [&](cd s) { return mo.Loop(s) * Pade(s, T, 3); };
  for (double w : {0.05, 2.0, 30.0, 133.0, 940.0, 2e4}) {
    const cd exact = L(cd(0, w));
    EXPECT_LT(std::abs(FrequencyResponse(r.loop->open, 0, 0, w) - exact) / std::abs(exact), 1e-10) << w;
  }
  std::vector<std::pair<double, double>> gain, phase;
  AnalyticCrossovers(L, r.loop->margins.w0, r.loop->margins.w1, &gain, &phase);
  const LoopMargins& mg = r.loop->margins;
  ASSERT_EQ(gain.size(), 1u);
  ASSERT_EQ(phase.size(), 2u);
  ASSERT_EQ(mg.gain_crossovers.size(), 1u);
  ASSERT_EQ(mg.phase_crossovers.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    std::printf("  phase crossover %.9g rad/s, gain margin %.9g dB (by hand %.9g rad/s, %.9g dB)\n",
                mg.phase_crossovers[i].w, mg.phase_crossovers[i].margin, phase[i].first, phase[i].second);
    EXPECT_LT(Rel(mg.phase_crossovers[i].w, phase[i].first), 1e-6);
    EXPECT_LT(Rel(mg.phase_crossovers[i].margin, phase[i].second), 1e-6);
  }
  ASSERT_TRUE(mg.gain_margin && mg.phase_margin);
  EXPECT_LT(Rel(mg.gain_margin->margin, phase[0].second), 1e-6);  // the smaller of the two
  EXPECT_LT(Rel(mg.phase_margin->margin, gain[0].second), 1e-6);
  EXPECT_LT(Rel(mg.phase_margin->w, gain[0].first), 1e-6);
  std::printf("  phase margin %.9g deg at %.9g rad/s (by hand %.9g deg)\n", mg.phase_margin->margin, mg.phase_margin->w,
              gain[0].second);
  // The true delay's phase margin at that crossover: -w T against the approximant's.
  const double pm_true = std::arg(-mo.Loop(cd(0, gain[0].first)) * std::exp(cd(0, -gain[0].first * T))) * 180 / M_PI;
  std::printf("  phase margin with the exact delay e^(-sT): %.9g deg\n", pm_true);
  EXPECT_LT(std::abs(pm_true - mg.phase_margin->margin), 1e-4);  // (w T)^7 / 100800 rad at w T = 0.3
}

Diagnostic LoopError(const std::string& file, const std::string& cut) {
  try {
    LoopOf(file, cut);
  } catch (const Error& e) {
    std::printf("%s\n", e.diagnostic().ToString().c_str());
    return e.diagnostic();
  }
  ADD_FAILURE() << "no error for --loop-at " << cut;
  return {};
}

TEST(Loop, ACutThatIsNoSignalIsALocatedError) {
  const std::string file = testing::SourcePath("examples/dc_motor_speed_control.yaml");
  // An unknown name: the nearest signal as a hint.
  Diagnostic d = LoopError(file, "ctl.uu");
  EXPECT_NE(d.message.find("no signal of that name"), std::string::npos) << d.message;
  EXPECT_NE(d.hint.find("did you mean 'ctl.u'"), std::string::npos) << d.hint;
  EXPECT_EQ(d.where.file, file);
  // A parameter: located at its line.
  d = LoopError(file, "Vmax");
  EXPECT_NE(d.message.find("is a parameter"), std::string::npos) << d.message;
  EXPECT_EQ(d.where.line, 12);
  // A junction's flow, a storage element's state: power variables, not signals.
  d = LoopError(file, "f_shaft");
  EXPECT_NE(d.message.find("power variable"), std::string::npos) << d.message;
  EXPECT_GT(d.where.line, 0);
  d = LoopError(file, "p_load.inertia");
  EXPECT_NE(d.message.find("storage element"), std::string::npos) << d.message;
  // An output that is an expression of power variables.
  d = LoopError(file, "motor.torque");
  EXPECT_NE(d.message.find("an output that is no signal"), std::string::npos) << d.message;
  EXPECT_GT(d.where.line, 0);
  // A signal that no loop passes through: a gain that only watches the speed.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("paynter_loop_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string text = testing::ReadFileBytes(file);
  text += "blocks:\n  - {name: watch, type: gain, input: load.omega, k: 2}\n";
  testing::WriteFileBytes(dir / "watched.yaml", text);
  d = LoopError((dir / "watched.yaml").string(), "watch.y");
  EXPECT_NE(d.message.find("no loop passes through"), std::string::npos) << d.message;
  EXPECT_FALSE(d.hint.empty());
  testing::RemoveTree(dir);
}

// A cut opens every path through its signal, the others stay closed:
// - at the PI's integral (a block's state, named by the instance's output
//   ctl.i), read by the controller's sum v = kp u + i only, the proportional
//   path stays closed inside: L_i(s) = (ki/s) P / (1 + kp P);
// - at the PI's output ctl.y, read by the supply and by the anti-windup's
//   (y - v)/Tt in the integral's rate: with y injected, i' = ki u + (y - kp u
//   - i)/Tt, and Tt = kp/ki gives i = y/(Tt s + 1), so with u = -P y,
//   L_y(s) = kp P - 1/(Tt s + 1).
TEST(Loop, EachCutOpensEveryPathThroughItsSignal) {
  const Motor mo;
  const std::string file = testing::SourcePath("examples/dc_motor_speed_control.yaml");
  const LinearizedModel i = LoopOf(file, "ctl.i"), y = LoopOf(file, "ctl.y");
  const double Tt = mo.kp / mo.ki;
  for (double w : {0.1, 3.0, 29.6, 500.0, 1e4}) {
    const cd s(0, w), P = mo.Plant(s);
    const cd exact_i = mo.ki / s * P / (1.0 + mo.kp * P), exact_y = mo.kp * P - 1.0 / (Tt * s + 1.0);
    EXPECT_LT(std::abs(FrequencyResponse(i.loop->open, 0, 0, w) - exact_i) / std::abs(exact_i), 1e-10) << w;
    EXPECT_LT(std::abs(FrequencyResponse(y.loop->open, 0, 0, w) - exact_y) / std::abs(exact_y), 1e-10) << w;
  }
}

}  // namespace
}  // namespace paynter
