// Signal blocks (docs/model-format.md, "Signal blocks"): each block against a
// closed form, blocks driving sources and element parameters, sensors,
// blocks inside submodels, the drawings' boxes and signal lines, and the
// errors (an unconnected input, an algebraic loop, an unknown output).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <functional>
#include <vector>

#include "test_util.h"

namespace paynter {
namespace {

// The largest |column - exact(t)| over the rows with t >= from.
// Rows at a jump (an event's two rows, before and after) are left out.
double MaxError(const Solution& s, const std::string& column, const std::function<double(double)>& exact,
                double from = -1, const std::vector<double>& jumps = {}) {
  const auto t = s.Column("t"), x = s.Column(column);
  EXPECT_EQ(t.size(), x.size());
  double err = 0;
  size_t used = 0;
  for (size_t i = 0; i < t.size() && i < x.size(); ++i) {
    if (t[i] < from) continue;
    bool at_jump = false;
    for (double j : jumps) at_jump = at_jump || std::abs(t[i] - j) < 1e-9;
    if (at_jump) continue;
    err = std::max(err, std::abs(x[i] - exact(t[i])));
    ++used;
  }
  EXPECT_GT(used, 10u);
  std::printf("  %-12s max error %.3g\n", column.c_str(), err);
  return err;
}

Solution RunYaml(const std::string& yaml, double t_end, double dt_out = 0.01, Method method = Method::kDopri5) {
  return testing::SimulateModel(LoadModelFromString(yaml, "blocks.yaml"), t_end, 1e-11, 1e-13, method, dt_out)
      .solution;
}

Diagnostic ErrorOf(const std::string& yaml) {
  try {
    LoadModelFromString(yaml, "bad.yaml");
  } catch (const Error& e) {
    std::printf("%s\n", e.diagnostic().ToString().c_str());
    return e.diagnostic();
  }
  ADD_FAILURE() << "no error for\n" << yaml;
  return {};
}

// A model whose bond graph is a source of no effort on a resistor, so that
// blocks stand alone (their outputs as columns).
std::string Alone(const std::string& blocks, const std::string& outputs) {
  return "elements:\n  - {name: r, kind: R, resistance: 1}\n  - {name: src, kind: Se, effort: 0}\nbonds: [[src, r]]\nblocks:\n" +
         blocks + "outputs:\n" + outputs;
}

// ---- the mechanism --------------------------------------------------------

// A first-order lag K/(tau s + 1) driven by a step A at t0.
TEST(Blocks, FirstOrderStepResponse) {
  const double K = 2, tau = 0.3, A = 1.5, t0 = 0.1;
  const Solution s = RunYaml(Alone("  - {name: lag, type: transfer_function, input: 1.5*step_at(0.1), num: [2], den: [0.3, 1]}\n",
                               "  y: lag.y\n"),
                         2.0);
  EXPECT_LT(MaxError(s, "y", [&](double t) { return t < t0 ? 0.0 : A * K * (1 - std::exp(-(t - t0) / tau)); }), 1e-9);
}

// A second-order system wn^2/(s^2 + 2 zeta wn s + wn^2), as a transfer
// function and as a state space, to a unit step.
TEST(Blocks, SecondOrderStepResponseAsTransferFunctionAndStateSpace) {
  const double wn = 5, z = 0.3, wd = wn * std::sqrt(1 - z * z);
  const auto exact = [&](double t) {
    return 1 - std::exp(-z * wn * t) / std::sqrt(1 - z * z) * std::sin(wd * t + std::acos(z));
  };
  const Solution s = RunYaml(Alone(R"Y(  - {name: g, type: transfer_function, input: 1, num: [25], den: [1, 3, 25]}
  - name: ss
    type: state_space
    inputs: [1]
    A: [[0, 1], [-25, -3]]
    B: [[0], [25]]
    C: [[1, 0]]
)Y",
                               "  y_tf: g.y\n  y_ss: ss.y1\n"),
                         3.0);
  EXPECT_LT(MaxError(s, "y_tf", exact), 1e-9);
  EXPECT_LT(MaxError(s, "y_ss", exact), 1e-9);
}

// A proper transfer function with feedthrough: (s + 3)/(s + 1) to a unit
// step is 3 - 2 e^-t.
TEST(Blocks, TransferFunctionWithFeedthrough) {
  const Solution s = RunYaml(Alone("  - {name: g, type: transfer_function, input: 1, num: [1, 3], den: [1, 1]}\n",
                               "  y: g.y\n"),
                         3.0);
  EXPECT_LT(MaxError(s, "y", [](double t) { return 3 - 2 * std::exp(-t); }), 1e-9);
}

// The Pade approximant of order n of e^(-sT), D(-s)/D(s) with
// D(s) = sum_k (2n-k)! n! / ((2n)! k! (n-k)!) (sT)^k.
std::complex<double> PadeExact(std::complex<double> s, double T, int n) {
  auto fact = [](int m) { return std::tgamma(m + 1.0); };
  std::complex<double> num = 0, den = 0;
  for (int k = 0; k <= n; ++k) {
    const double c = fact(2 * n - k) * fact(n) / (fact(2 * n) * fact(k) * fact(n - k));
    den += c * std::pow(s * T, k);
    num += c * std::pow(-s * T, k);
  }
  return num / den;
}

// A transport delay by its Pade approximant (T = 0.2), to a unit step at
// t0 = 0.1, tau = t - t0: order 1, (1 - sT/2)/(1 + sT/2), gives
// 1 - 2 e^(-2 tau/T); order 2, H = 1 - sT/D(s) with D = 1 + sT/2 + s^2T^2/12,
// gives 1 - 4 sqrt(3) e^(-3 tau/T) sin(sqrt(3) tau/T). A constant input held
// since before t = 0 (`initial`) comes out unchanged. The frequency
// response of orders 3, 7 and 10 is the approximant's, of gain 1.
TEST(Blocks, PadeDelayAgainstItsClosedForm) {
  const double T = 0.2, t0 = 0.1;
  const Solution s = RunYaml(Alone(R"Y(  - {name: d1, type: pade_delay, input: step_at(0.1), T: 0.2, order: 1}
  - {name: d2, type: pade_delay, input: step_at(0.1), T: 0.2, order: 2}
  - {name: held, type: pade_delay, input: 2.5, T: 0.2, order: 4, initial: 2.5}
)Y",
                                   "  y1: d1.y\n  y2: d2.y\n  held: held.y\n"),
                             2.0, 0.005);
  EXPECT_LT(MaxError(s, "y1", [&](double t) { return t < t0 ? 0.0 : 1 - 2 * std::exp(-2 * (t - t0) / T); }, -1, {t0}),
            1e-9);
  EXPECT_LT(MaxError(s, "y2",
                     [&](double t) {
                       const double u = (t - t0) / T;
                       return t < t0 ? 0.0 : 1 - 4 * std::sqrt(3.0) * std::exp(-3 * u) * std::sin(std::sqrt(3.0) * u);
                     },
                     -1, {t0}),
            1e-9);
  EXPECT_LT(MaxError(s, "held", [](double) { return 2.5; }), 1e-12);
  for (int n : {3, 7, 10}) {
    const Model m = LoadModelFromString(
        fmt::format("elements:\n  - {{name: u, kind: Se, effort: 0, input: true}}\n  - {{name: r, kind: R, "
                    "resistance: 1}}\nbonds: [[u, r]]\nblocks:\n  - {{name: d, type: pade_delay, input: e_u, T: 0.2, "
                    "order: {}}}\noutputs: {{y: d.y}}\n",
                    n),
        "pade.yaml");
    std::vector<std::string> inputs, input_parameters;
    const Model with = WithInputs(m, &inputs, &input_parameters);
    const EquationSystem sys = BuildEquations(with, AssignCausality(with));
    const LinearModel lin = Linearize(sys, inputs, input_parameters, 0, sys.initial_state);
    ASSERT_EQ(static_cast<int>(lin.states.size()), n);
    for (double w : {0.1, 1.0, 5.0, 20.0, 100.0, 1e3}) {
      const std::complex<double> h = FrequencyResponse(lin, 0, 0, w), exact = PadeExact({0, w}, T, n);
      EXPECT_LT(std::abs(h - exact), 1e-12) << "order " << n << " w " << w;
      EXPECT_NEAR(std::abs(h), 1.0, 1e-12);
      if (w * T <= 1)  // the true delay's phase -wT, within the approximant's error
        std::printf("  order %d, w T = %g: phase error to -w T %.3g rad\n", n, w * T,
                    std::abs(std::arg(h * std::exp(std::complex<double>(0, w * T)))));
    }
  }
}

// Gain, sum and product: y = 2 (sin t - 0.5) * t.
TEST(Blocks, GainSumProduct) {
  const Solution s = RunYaml(Alone(R"Y(  - {name: p, type: product, inputs: [g.y, t]}
  - {name: d, type: sum, inputs: [sin(t), 0.5], signs: "+-"}
  - {name: g, type: gain, input: d.y, k: 2}
)Y",
                               "  y: p.y\n"),
                         2.0);
  EXPECT_LT(MaxError(s, "y", [](double t) { return 2 * (std::sin(t) - 0.5) * t; }), 1e-12);
}

// An integrator k = 2 of +1 until t = 1, then -1, held within [-0.3, 0.5].
TEST(Blocks, IntegratorWithLimits) {
  const Solution s = RunYaml(
      Alone("  - {name: i, type: integrator, input: 1 - 2*step_at(1), k: 2, max: 0.5, min: -0.3}\n", "  y: i.y\n"),
      2.0);
  const auto exact = [](double t) {
    if (t < 0.25) return 2 * t;
    if (t < 1) return 0.5;
    return std::max(0.5 - 2 * (t - 1), -0.3);
  };
  EXPECT_LT(MaxError(s, "y", exact), 1e-9);
}

// An integrator reset to 0.2 when sin(pi t) turns negative (t = 1).
TEST(Blocks, IntegratorReset) {
  const Solution s = RunYaml(
      Alone("  - {name: i, type: integrator, input: 1, reset: \"sin(pi*t) < 0\", reset_value: 0.2, initial: 0.1}\n",
            "  y: i.y\n"),
      1.9);
  const auto exact = [](double t) { return t < 1 ? 0.1 + t : 0.2 + (t - 1); };
  EXPECT_LT(MaxError(s, "y", exact, -1, {1.0}), 1e-9);
  // The reset's rows at t = 1: 1.1 just before, then 0.2.
  const auto t = s.Column("t"), y = s.Column("y");
  std::vector<double> at_reset;
  for (size_t i = 0; i < t.size(); ++i)
    if (std::abs(t[i] - 1) < 1e-9) at_reset.push_back(y[i]);
  ASSERT_GE(at_reset.size(), 2u);
  EXPECT_NEAR(at_reset.front(), 1.1, 1e-9);
  EXPECT_NEAR(at_reset.back(), 0.2, 1e-15);
}

// The filtered derivative s/(T s + 1) of a ramp: 1 - e^(-t/T).
TEST(Blocks, FilteredDerivativeOfARamp) {
  const Solution s =
      RunYaml(Alone("  - {name: d, type: derivative, input: 3*t, k: 0.5, T: 0.05}\n", "  y: d.y\n"), 1.0, 0.005);
  EXPECT_LT(MaxError(s, "y", [](double t) { return 1.5 * (1 - std::exp(-t / 0.05)); }), 1e-9);
}

// Saturation and dead zone of 2 sin(3t), limits [-0.5, 1].
TEST(Blocks, SaturationAndDeadZone) {
  const Solution s = RunYaml(Alone(R"Y(  - {name: sat, type: saturation, input: 2*sin(3*t), max: 1, min: -0.5}
  - {name: dz, type: dead_zone, input: 2*sin(3*t), max: 1, min: -0.5}
  - {name: sym, type: saturation, input: 2*sin(3*t), max: 0.7}
)Y",
                               "  sat: sat.y\n  dz: dz.y\n  sym: sym.y\n"),
                         4.0);
  const auto u = [](double t) { return 2 * std::sin(3 * t); };
  EXPECT_LT(MaxError(s, "sat", [&](double t) { return std::clamp(u(t), -0.5, 1.0); }), 1e-12);
  EXPECT_LT(MaxError(s, "dz", [&](double t) { return u(t) - std::clamp(u(t), -0.5, 1.0); }), 1e-12);
  EXPECT_LT(MaxError(s, "sym", [&](double t) { return std::clamp(u(t), -0.7, 0.7); }), 1e-12);
}

// A 1D table, and a 2D table of f(x, y) = x y + 2 x (bilinear, so its
// interpolation is exact inside the grid; outside it the edges hold).
TEST(Blocks, LookupTables) {
  const Solution s = RunYaml(Alone(R"Y(  - {name: l1, type: lookup, input: t, x: [0, 1, 3], y: [0, 2, 1]}
  - name: l2
    type: lookup2d
    inputs: [t, 2 - t]
    x: [0, 0.5, 1.5, 2]
    y: [0, 1, 2]
    z: [[0, 0, 0], [1, 1.5, 2], [3, 4.5, 6], [4, 6, 8]]
)Y",
                               "  y1: l1.y\n  y2: l2.y\n"),
                         3.0);
  EXPECT_LT(MaxError(s, "y1", [](double t) { return t < 1 ? 2 * t : 2 - (t - 1) / 2; }), 1e-12);
  const auto f = [](double x, double y) { return x * y + 2 * x; };
  EXPECT_LT(MaxError(s, "y2", [&](double t) { return t <= 2 ? f(t, 2 - t) : f(2, 0); }), 1e-12);
}

// PI control of a mass with a damper (m v' = F - c v, m = 1, c = 1) to a unit
// step: kp = 3, ki = 4 give (s + 2)^2, so v = 1 - e^-2t + t e^-2t. The ideal
// form with k = 3, Ti = 0.75 is the same controller.
TEST(Blocks, PiOnAKnownPlantBothForms) {
  const auto exact = [](double t) { return 1 - std::exp(-2 * t) + t * std::exp(-2 * t); };
  for (const std::string pid : {"{name: c, type: pid, input: e.y, kp: 3, ki: 4}",
                                "{name: c, type: pid, form: ideal, input: e.y, k: 3, Ti: 0.75}"}) {
    const Solution s = RunYaml(R"Y(
elements:
  - {name: F, kind: Se, effort: c.y}
  - {name: m, kind: I, inertance: 1}
  - {name: d, kind: R, resistance: 1}
  - {name: v, kind: "1"}
bonds: [[F, v], [v, m], [v, d]]
blocks:
  - {name: e, type: sum, inputs: [1, f_v], signs: "+-"}
  - )Y" + pid + R"Y(
outputs: {v: f_v}
)Y",
                           4.0);
    EXPECT_LT(MaxError(s, "v", exact), 1e-9);
  }
}

// The derivative path of a PID (kp = 0): kd s/(Tf s + 1) of a ramp.
TEST(Blocks, PidDerivativePath) {
  const Solution s =
      RunYaml(Alone("  - {name: c, type: pid, input: 2*t, kp: 0, kd: 0.5, Tf: 0.1}\n", "  y: c.y\n"), 1.0, 0.005);
  EXPECT_LT(MaxError(s, "y", [](double t) { return 1.0 * (1 - std::exp(-t / 0.1)); }), 1e-9);
}

// A saturated PI with back-calculation: while the output is held at its
// limit, the integrator relaxes as i' = ki e + (umax - kp e - i)/Tt, a linear
// ODE with a closed form for a constant error; without anti-windup it winds up
// as ki e t.
TEST(Blocks, PidOutputLimitsAndAntiWindup) {
  const double kp = 2, ki = 5, e = 1, umax = 3, Tt = 0.2;
  // While saturated (kp e + i > umax): i' = ki e - (kp e + i - umax)/Tt, i(0) = 0.
  // The output reaches the limit when i = umax - kp e = 1 (t1 = 1/(ki e) = 0.2 s),
  // then i tends to i_inf = umax - kp e + ki e Tt = 2.
  const double t1 = (umax - kp * e) / (ki * e), i_inf = umax - kp * e + ki * e * Tt;
  const auto i_exact = [&](double t) {
    if (t < t1) return ki * e * t;
    return i_inf + (umax - kp * e - i_inf) * std::exp(-(t - t1) / Tt);
  };
  const Solution s = RunYaml(Alone(R"Y(  - {name: c, type: pid, input: 1, kp: 2, ki: 5, max: 3, Tt: 0.2}
  - {name: w, type: pid, input: 1, kp: 2, ki: 5, max: 3, antiwindup: none}
)Y",
                               "  y: c.y\n  i: c.i\n  yw: w.y\n  iw: w.i\n"),
                         1.5);
  EXPECT_LT(MaxError(s, "i", i_exact), 1e-9);
  EXPECT_LT(MaxError(s, "y", [&](double t) { return std::min(kp * e + ki * e * t, umax); }), 1e-9);
  EXPECT_LT(MaxError(s, "iw", [&](double t) { return ki * e * t; }), 1e-9);
  EXPECT_LT(MaxError(s, "yw", [&](double t) { return std::min(kp * e + ki * e * t, umax); }), 1e-9);
}

// Sensors: a bond's effort and flow, the momentum (time integral of the
// effort) and displacement (of the flow) of a mass pushed by F = 2: v = 2t/m,
// momentum 2t, displacement t^2/m.
TEST(Blocks, SensorsOfABond) {
  const Solution s = RunYaml(R"Y(
elements:
  - {name: F, kind: Se, effort: 2}
  - {name: m, kind: I, inertance: 4}
bonds: [{name: push, from: F, to: m}]
blocks:
  - {name: se, type: sensor, of: push, quantity: effort}
  - {name: sf, type: sensor, of: push, quantity: flow}
  - {name: sp, type: sensor, of: push, quantity: momentum}
  - {name: sx, type: sensor, of: m, quantity: displacement, initial: 1}
outputs: {e: se.y, f: sf.y, p: sp.y, x: sx.y}
)Y",
                         2.0);
  EXPECT_LT(MaxError(s, "e", [](double) { return 2.0; }), 1e-14);
  EXPECT_LT(MaxError(s, "f", [](double t) { return t / 2; }), 1e-12);
  EXPECT_LT(MaxError(s, "p", [](double t) { return 2 * t; }), 1e-11);
  EXPECT_LT(MaxError(s, "x", [](double t) { return 1 + t * t / 4; }), 1e-11);
}

// A signal modulates an element parameter: an RC discharge through
// R(t) = R0 (1 + t) (a gain block) gives v = v0 (1 + t)^(-1/(R0 C)); and a
// library source driven by a block output (velocity feedback on a mass,
// m v' = -k v: v = v0 e^(-k t/m)).
TEST(Blocks, SignalsModulateParametersAndSources) {
  const Solution rc = RunYaml(R"Y(
elements:
  - {name: C, kind: C, capacitance: 0.5, initial: 1}
  - {name: R, kind: R, resistance: r.y}
  - {name: n, kind: "0"}
bonds: [[n, C], [n, R]]
blocks:
  - {name: r, type: gain, input: 1 + t, k: 4}
outputs: {v: e_C}
)Y",
                          2.0);
  EXPECT_LT(MaxError(rc, "v", [](double t) { return 2 * std::pow(1 + t, -0.5); }), 1e-9);
  const Solution fb = RunYaml(R"Y(
instances:
  - {name: push, use: "lib:mechanical/force_source", parameters: {F: k.y}}
  - {name: body, use: "lib:mechanical/mass", parameters: {m: 2, v0: 3}}
bonds: [[push.p, body.p]]
blocks:
  - {name: k, type: gain, input: body.v, k: -5}
)Y",
                          2.0);
  EXPECT_LT(MaxError(fb, "body.v", [](double t) { return 3 * std::exp(-2.5 * t); }), 1e-9);
}

// A block inside a submodel (a first-order lag whose input is a parameter the
// instance gives a signal), twice, and an event inside a submodel (its reset,
// which flattening once dropped).
TEST(Blocks, BlocksAndEventsInsideSubmodels) {
  const Solution s = RunYaml(R"Y(
submodels:
  lagged:
    parameters: {u: 0, tau: 1}
    elements: [{name: r, kind: R, resistance: 1}, {name: z, kind: Se, effort: 0}]
    bonds: [[z, r]]
    blocks:
      - {name: f, type: transfer_function, input: u, num: [1], den: [tau, 1]}
      - {name: clock, type: integrator, input: 1, reset: clock.y > 0.5}
    outputs: {y: f.y, c: clock.y}
instances:
  - {name: a, use: lagged, parameters: {u: step_at(0), tau: 0.5}}
  - {name: b, use: lagged, parameters: {u: 2*a.y, tau: 0.25}}
blocks:
  - {name: twice, type: gain, input: b.y, k: 1}
outputs: {by: twice.y}
)Y",
                         2.0);
  EXPECT_LT(MaxError(s, "a.y", [](double t) { return 1 - std::exp(-2 * t); }), 1e-9);
  // b: 0.25 y' + y = 2 (1 - e^-2t): y = 2 (1 - 2 e^-2t + e^-4t).
  EXPECT_LT(MaxError(s, "by", [](double t) { return 2 * (1 - 2 * std::exp(-2 * t) + std::exp(-4 * t)); }), 1e-9);
  // The clock restarts at each 0.5 s (an event gives two rows: before and after).
  const auto t = s.Column("t"), c = s.Column("a.c");
  int resets = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    const double k = std::round(t[i] / 0.5);
    if (k >= 1 && std::abs(t[i] - 0.5 * k) < 1e-9) {
      resets += c[i] < 1e-9;
      continue;
    }
    EXPECT_NEAR(c[i], t[i] - 0.5 * std::floor(t[i] / 0.5), 1e-9) << "t = " << t[i];
  }
  EXPECT_EQ(resets, 3);  // at 0.5, 1 and 1.5 (2 is the end)
}

// The drawing shows each block as a box and its signal lines as dashed
// arrows from what it reads and to the elements its outputs drive.
TEST(Blocks, DrawingShowsBlocksAndSignalLines) {
  const Model m = LoadModelFromString(R"Y(
elements:
  - {name: F, kind: Se, effort: c.y}
  - {name: m, kind: I, inertance: 1}
  - {name: v, kind: "1"}
bonds: [[F, v], [v, m]]
blocks:
  - {name: e, type: sum, inputs: [1, f_v], signs: "+-"}
  - {name: c, type: pid, input: e.y, kp: 3, ki: 4}
)Y",
                                      "draw.yaml");
  const std::string dot = BondGraphDot(m, nullptr);
  EXPECT_NE(dot.find("\"blk:c\" [id=\"blk1\", label=\"pid\\nc\", shape=box"), std::string::npos) << dot;
  EXPECT_NE(dot.find("\"v\" -> \"blk:e\" [style=dashed"), std::string::npos) << dot;
  EXPECT_NE(dot.find("\"blk:e\" -> \"blk:c\" [style=dashed"), std::string::npos) << dot;
  EXPECT_NE(dot.find("\"blk:c\" -> \"F\" [style=dashed"), std::string::npos) << dot;
}

// A model with no state whose outputs hold conditions: its events still
// switch them (the run once skipped the event handling when there was no
// state to integrate, and step_at(0.3) stayed 0), under every method.
TEST(Blocks, StatelessModelSwitchesItsConditions) {
  for (Method m : {Method::kDopri5, Method::kRK4, Method::kBDF}) {
    const Solution s = testing::SimulateModel(LoadModelFromString(Alone("  - {name: g, type: gain, input: step_at(0.3), k: 2}\n",
                                                                        "  y: g.y\n  s: if(t > 0.5, 1, 0)\n"),
                                                                  "stateless.yaml"),
                                              1.0, 1e-10, 1e-12, m, 0.01, Backend::kAuto)
                             .solution;
    const auto t = s.Column("t"), y = s.Column("y"), c = s.Column("s");
    size_t checked = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      if (std::abs(t[i] - 0.3) < 1e-9 || std::abs(t[i] - 0.5) < 1e-9) continue;  // an event's two rows
      EXPECT_EQ(y[i], t[i] < 0.3 ? 0.0 : 2.0) << "t = " << t[i];
      EXPECT_EQ(c[i], t[i] < 0.5 ? 0.0 : 1.0) << "t = " << t[i];
      ++checked;
    }
    EXPECT_GT(checked, 90u);
  }
}

// Linearization takes a closed loop with blocks as any model: the PI loop of
// PiOnAKnownPlantBothForms from the setpoint r to the speed v is
// T(s) = (3 s + 4)/(s^2 + 4 s + 4): A's eigenvalues are the double root -2 and
// the frequency response is T(jw).
TEST(Blocks, LinearizeAClosedLoop) {
  const Model m = LoadModelFromString(R"Y(
elements:
  - {name: r, kind: Se, effort: 0, input: true}
  - {name: rr, kind: R, resistance: 1}
  - {name: F, kind: Se, effort: c.y}
  - {name: m, kind: I, inertance: 1}
  - {name: d, kind: R, resistance: 1}
  - {name: v, kind: "1"}
bonds: [[r, rr], [F, v], [v, m], [v, d]]
blocks:
  - {name: e, type: sum, inputs: [e_r, f_v], signs: "+-"}
  - {name: c, type: pid, input: e.y, kp: 3, ki: 4}
outputs: {v: f_v}
)Y",
                                      "loop.yaml");
  std::vector<std::string> inputs, input_parameters;
  const Model with = WithInputs(m, &inputs, &input_parameters);
  const EquationSystem sys = BuildEquations(with, AssignCausality(with));
  const LinearModel lin = Linearize(sys, inputs, input_parameters, 0, sys.initial_state);
  ASSERT_EQ(lin.states.size(), 2u);
  for (const Mode& mode : Modes(lin.A)) {
    EXPECT_NEAR(mode.lambda.real(), -2, 1e-6);
    EXPECT_NEAR(mode.lambda.imag(), 0, 1e-6);
  }
  for (double w : {0.01, 0.5, 2.0, 10.0, 300.0}) {
    const std::complex<double> s(0, w);
    const std::complex<double> exact = (3.0 * s + 4.0) / (s * s + 4.0 * s + 4.0);
    EXPECT_LT(std::abs(FrequencyResponse(lin, 0, 0, w) - exact), 1e-12 * std::max(1.0, std::abs(exact))) << w;
  }
}

// A rate limiter (rising 2/s, falling 1/s, T = 1e-3) of a unit step up at
// t = 0.1 and back down at 1: y rises at 2/s until within 2T of 1, then
// relaxes as 1 - 2T e^(-(t - t1)/T); down at 1/s likewise.
TEST(Blocks, RateLimiterOfAStep) {
  const double R = 2, F = 1, T = 1e-3;
  const Solution s = RunYaml(
      Alone("  - {name: lim, type: rate_limiter, input: step_at(0.1) - step_at(1), rising: 2, falling: -1, T: 1e-3}\n",
            "  y: lim.y\n"),
      2.0, 0.001);
  const double t1 = 0.1 + (1 - R * T) / R;  // the slope ends at y = 1 - R T
  const auto up = [&](double t) { return t < 0.1 ? 0.0 : t < t1 ? R * (t - 0.1) : 1 - R * T * std::exp(-(t - t1) / T); };
  const double y1 = up(1.0), t2 = 1 + (y1 - F * T) / F;  // down from y1 at F until y = F T
  const auto exact = [&](double t) {
    if (t < 1) return up(t);
    return t < t2 ? y1 - F * (t - 1) : F * T * std::exp(-(t - t2) / T);
  };
  EXPECT_LT(MaxError(s, "y", exact), 1e-9);
}

// A relay with hysteresis of sin(t): high (2) once sin t rises above 0.5,
// low (-1) once it falls below -0.3, its value kept in between.
TEST(Blocks, RelayWithHysteresis) {
  const Solution s = RunYaml(
      Alone("  - {name: h, type: relay, input: sin(t), on: 0.5, off: -0.3, high: 2, low: -1}\n", "  y: h.y\n"), 10.0,
      0.01);
  const double on = std::asin(0.5), off = M_PI + std::asin(0.3);
  const auto exact = [&](double t) {
    const double p = std::fmod(t, 2 * M_PI);
    return p > on && p < off ? 2.0 : -1.0;
  };
  EXPECT_LT(MaxError(s, "y", exact, -1, {on, off, on + 2 * M_PI, off + 2 * M_PI}), 1e-15);
}

// ---- sampled blocks --------------------------------------------------------

// The value a sampled output holds at time t: the samples are at t_k (k = 1,
// 2, ...), accumulated as the block's clock does (t_k = t_(k-1) + Ts), and
// y_k the difference equation's value after sample k (y_0 before the first).
double HeldValue(double t, const std::vector<double>& tk, const std::vector<double>& yk) {
  size_t k = 0;
  while (k < tk.size() && tk[k] <= t) ++k;
  return yk[k];
}

// Zero-order hold, unit delay and discrete PID at Ts = 0.1 of u = sin(3t) + 0.5,
// against their difference equations: each row between samples holds the
// value after the last sample, to 1e-12.
TEST(Blocks, SampledBlocksFollowTheirDifferenceEquations) {
  const double Ts = 0.1, kp = 2, ki = 3, kd = 0.05, t_end = 2.0;
  const Solution s = RunYaml(Alone(R"Y(  - {name: h, type: zero_order_hold, input: sin(3*t) + 0.5, Ts: 0.1, initial: 0.25}
  - {name: d, type: unit_delay, input: sin(3*t) + 0.5, Ts: 0.1}
  - {name: c, type: discrete_pid, input: sin(3*t) + 0.5, Ts: 0.1, kp: 2, ki: 3, kd: 0.05}
  - {name: cl, type: discrete_pid, input: sin(3*t) + 0.5, Ts: 0.1, kp: 2, ki: 3, max: 1.5, min: -1}
)Y",
                                   "  h: h.y\n  d: d.y\n  c: c.y\n  cl: cl.y\n"),
                             t_end, 0.013);
  const auto u = [](double t) { return std::sin(3 * t) + 0.5; };
  std::vector<double> tk, hold{0.25}, delay{0, 0}, pid{0}, pid_limited{0};
  double i = 0, e_prev = 0, il = 0;
  for (double t = Ts; t <= t_end + 1e-9; t += Ts) {
    tk.push_back(t);
    const double e = u(t);
    hold.push_back(e);
    delay.push_back(e);  // after sample k + 1 the delay shows sample k (y_0 = y_1 = the initial 0)
    i += ki * Ts * e;
    pid.push_back(kp * e + i + kd * (e - e_prev) / Ts);
    e_prev = e;
    const double v = kp * e + il + ki * Ts * e;
    if (v <= 1.5 && v >= -1) il += ki * Ts * e;  // conditional integration
    pid_limited.push_back(std::clamp(v, -1.0, 1.5));
  }
  std::vector<double> sample_times(tk.begin(), tk.end());
  EXPECT_LT(MaxError(s, "h", [&](double t) { return HeldValue(t, tk, hold); }, -1, sample_times), 1e-12);
  EXPECT_LT(MaxError(s, "d", [&](double t) { return HeldValue(t, tk, delay); }, -1, sample_times), 1e-12);
  EXPECT_LT(MaxError(s, "c", [&](double t) { return HeldValue(t, tk, pid); }, -1, sample_times), 1e-12);
  EXPECT_LT(MaxError(s, "cl", [&](double t) { return HeldValue(t, tk, pid_limited); }, -1, sample_times), 1e-12);
  double clipped = 0;
  for (double y : s.Column("cl")) clipped = std::max(clipped, y);
  EXPECT_EQ(clipped, 1.5);  // the limit is reached
}

// ---- the component library: control and sensors ---------------------------

// lib:control/pi on the plant of PiOnAKnownPlantBothForms, and
// lib:control/first_order from y0 = 1 toward k = 2 with T = 0.5.
TEST(BlocksLibrary, PiAndFirstOrder) {
  const Solution s = RunYaml(R"Y(
instances:
  - {name: ctl, use: "lib:control/pi", parameters: {u: 1 - body.v, kp: 3, ki: 4}}
  - {name: push, use: "lib:mechanical/force_source", parameters: {F: ctl.y}}
  - {name: body, use: "lib:mechanical/mass", parameters: {m: 1}}
  - {name: d, use: "lib:mechanical/damper", parameters: {c: 1}}
  - {name: lag, use: "lib:control/first_order", parameters: {u: 1, k: 2, T: 0.5, y0: 1}}
elements: [{name: J, kind: "1"}]
bonds: [[push.p, J], [J, body.p], [J, d.p]]
)Y",
                         4.0);
  EXPECT_LT(MaxError(s, "body.v", [](double t) { return 1 - std::exp(-2 * t) + t * std::exp(-2 * t); }), 1e-9);
  EXPECT_LT(MaxError(s, "lag.y", [](double t) { return 2 - std::exp(-t / 0.5); }), 1e-9);
}

// lib:control/second_order (w = 4, zeta = 0.5, k = 3), lib:control/integrator
// and lib:control/limiter.
TEST(BlocksLibrary, SecondOrderIntegratorLimiter) {
  const Solution s = RunYaml(R"Y(
instances:
  - {name: g, use: "lib:control/second_order", parameters: {u: 1, k: 3, w: 4, zeta: 0.5}}
  - {name: i, use: "lib:control/integrator", parameters: {u: cos(t), y0: 0.5, max: 1.2}}
  - {name: l, use: "lib:control/limiter", parameters: {u: 3*sin(t), max: 2}}
elements: [{name: r, kind: R, resistance: 1}, {name: z, kind: Se, effort: 0}]
bonds: [[z, r]]
)Y",
                         4.0);
  const double w = 4, z = 0.5, wd = w * std::sqrt(1 - z * z);
  EXPECT_LT(MaxError(s, "g.y",
                     [&](double t) {
                       return 3 * (1 - std::exp(-z * w * t) / std::sqrt(1 - z * z) * std::sin(wd * t + std::acos(z)));
                     }),
            1e-9);
  // 0.5 + sin t reaches 1.2 at asin(0.7), holds until cos t < 0 (t = pi/2), then follows 1.2 + sin t - 1.
  EXPECT_LT(MaxError(s, "i.y",
                     [](double t) {
                       if (t < std::asin(0.7)) return 0.5 + std::sin(t);
                       if (t < M_PI / 2) return 1.2;
                       return 0.2 + std::sin(t);
                     }),
            1e-9);
  EXPECT_LT(MaxError(s, "l.y", [](double t) { return std::clamp(3 * std::sin(t), -2.0, 2.0); }), 1e-12);
}

// lib:control/pade_delay (order 3) of a slow sine, w T = 0.1: after the
// approximant's transient (its poles are at -3.68/T and below), the output is
// the exactly delayed sine sin(2 (t - T)), the approximant's phase error
// being (w T)^7/100800 = 1e-12 rad.
TEST(BlocksLibrary, PadeDelayOfASine) {
  const Solution s = RunYaml(R"Y(
instances:
  - {name: late, use: "lib:control/pade_delay", parameters: {u: sin(2*t), T: 0.05}}
elements: [{name: r, kind: R, resistance: 1}, {name: z, kind: Se, effort: 0}]
bonds: [[z, r]]
)Y",
                             3.0);
  EXPECT_LT(MaxError(s, "late.y", [](double t) { return std::sin(2 * (t - 0.05)); }, 1.0), 1e-9);
}

// lib:sensors: a mass m = 4 pushed by F = 2 through a flow sensor, with an
// effort sensor on the node: v = t/2, x = t^2/4, the force 2 and its impulse 2t.
TEST(BlocksLibrary, Sensors) {
  const Solution s = RunYaml(R"Y(
instances:
  - {name: push, use: "lib:mechanical/force_source", parameters: {F: 2}}
  - {name: fs, use: "lib:sensors/flow_sensor", parameters: {x0: 1}}
  - {name: es, use: "lib:sensors/effort_sensor"}
  - {name: body, use: "lib:mechanical/mass", parameters: {m: 4}}
elements: [{name: node, kind: "0"}]
bonds: [[push.p, node], [node, es.p], [node, fs.p], [fs.n, body.p]]
)Y",
                         2.0);
  EXPECT_LT(MaxError(s, "fs.y", [](double t) { return t / 2; }), 1e-11);
  EXPECT_LT(MaxError(s, "fs.x", [](double t) { return 1 + t * t / 4; }), 1e-11);
  EXPECT_LT(MaxError(s, "es.y", [](double) { return 2.0; }), 1e-12);
  EXPECT_LT(MaxError(s, "es.p", [](double t) { return 2 * t; }), 1e-11);
}

// examples/dc_motor_speed_control.yaml: while the PI's voltage is held at
// Vmax the motor runs as examples/dc_motor_load.yaml does from a 24 V step;
// the speed then settles on the setpoint; without anti-windup (Tt huge) the
// integral winds up and the speed overshoots more.
TEST(BlocksLibrary, DcMotorSpeedControlExample) {
  const std::string path = testing::SourcePath("examples/dc_motor_speed_control.yaml");
  std::string text = testing::ReadFileBytes(path);
  const Solution s = testing::SimulateModel(LoadModel(path), 1.5, 1e-11, 1e-13, Method::kDopri5, 1e-3).solution;
  std::string open = testing::ReadFileBytes(testing::SourcePath("examples/dc_motor_load.yaml"));
  open.replace(open.find("parameters: {V: V}"), 18, "parameters: {V: 24*step_at(0.1)}");
  const Solution o =
      testing::SimulateModel(LoadModelFromString(open, "open.yaml"), 1.5, 1e-11, 1e-13, Method::kDopri5, 1e-3).solution;
  const auto t = s.Column("t"), speed = s.Column("speed"), volt = s.Column("voltage");
  const auto to = o.Column("t"), wo = o.Column("load.omega");
  size_t saturated = 0, j = 0;
  double exit = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] <= 0.1 + 1e-9) continue;
    if (volt[i] < 24 - 1e-12) {
      exit = t[i];
      break;
    }
    while (j < to.size() && to[j] < t[i] - 1e-12) ++j;  // the open-loop row at the same time
    ASSERT_LT(j, to.size());
    if (std::abs(to[j] - t[i]) > 1e-12) continue;  // an event's row of one run only
    EXPECT_NEAR(speed[i], wo[j], 1e-9) << "t = " << t[i];
    ++saturated;
  }
  std::printf("  held at 24 V from 0.1 s to %.4f s (%zu rows)\n", exit, saturated);
  EXPECT_GT(saturated, 20u);
  EXPECT_NEAR(speed.back(), 60, 1e-6);
  double peak = 0, peak_windup = 0;
  for (double w : speed) peak = std::max(peak, w);
  text.replace(text.find("min: -Vmax}"), 11, "min: -Vmax, Tt: 1e9}");
  const Solution wu =
      testing::SimulateModel(LoadModelFromString(text, "windup.yaml"), 1.5, 1e-11, 1e-13, Method::kDopri5, 1e-3).solution;
  for (double w : wu.Column("speed")) peak_windup = std::max(peak_windup, w);
  std::printf("  peak speed %.4f (back-calculation), %.4f (winding up)\n", peak, peak_windup);
  EXPECT_LT(peak - 60, 0.5 * (peak_windup - 60));
}

// examples/B4_pd_ramp.yaml: blocks driving a mechanism's joint. The moment
// at every row is the PD law of the row's angle and rate, and the shaft
// tracks the ramp within 0.025 rad (0.0216 measured) while the arm swings about J2 (which
// disturbs it) through more than 2 rad.
TEST(BlocksLibrary, B4JointUnderPdTracksARamp) {
  const Solution s = testing::SimulateModel(LoadModel(testing::SourcePath("examples/B4_pd_ramp.yaml")), 5, 1e-10,
                                            1e-12, Method::kDopri5, 0.01)
                         .solution;
  const auto t = s.Column("t"), th = s.Column("theta1"), w = s.Column("w1"), moment = s.Column("moment"),
             err = s.Column("error"), th2 = s.Column("theta2");
  double law = 0, worst = 0, swing = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    law = std::max(law, std::abs(moment[i] - (20 * (0.5 * t[i] - th[i]) + 4 * (0.5 - w[i]))));
    worst = std::max(worst, std::abs(err[i]));
    swing = std::max(swing, std::abs(th2[i]));
  }
  std::printf("  moment against the PD law: %.3g N m; tracking error at most %.3g rad; arm swing %.3g rad\n", law,
              worst, swing);
  EXPECT_LT(law, 1e-12);
  EXPECT_LT(worst, 0.025);
  EXPECT_GT(swing, 2.0);
  EXPECT_NEAR(th.back(), 2.5, 0.02);
}

// examples/dc_motor_sampled_control.yaml: the discrete PI at 1 kHz holds its
// voltage between samples (it changes only at t = k ms), and settles the
// speed on 60 rad/s. (Its difference equation is checked to 1e-12 in
// Blocks.SampledBlocksFollowTheirDifferenceEquations.)
TEST(BlocksLibrary, SampledSpeedControlExample) {
  const Solution s = testing::SimulateModel(LoadModel(testing::SourcePath("examples/dc_motor_sampled_control.yaml")),
                                            1.5, 1e-10, 1e-12, Method::kDopri5, 3.7e-4)
                         .solution;
  const auto t = s.Column("t"), v = s.Column("voltage"), w = s.Column("speed");
  size_t held = 0, samples = 0;
  for (size_t i = 1; i < t.size(); ++i) {
    if (t[i] == t[i - 1]) {  // an event's two rows: the sample itself
      samples += v[i] != v[i - 1];
      continue;
    }
    const double k = std::floor(t[i] / 1e-3 + 1e-6);  // a sample time k ms in (t[i-1], t[i]]?
    if (k * 1e-3 > t[i - 1] + 1e-12) continue;
    EXPECT_EQ(v[i], v[i - 1]) << "the voltage changed between samples at t = " << t[i];
    ++held;
  }
  std::printf("  %zu samples changed the voltage, %zu rows held it\n", samples, held);
  EXPECT_GT(held, t.size() / 3);
  EXPECT_GT(samples, 1000u);
  EXPECT_NEAR(w.back(), 60, 1e-6);
}

// `paynter expand` writes a model with blocks as one without (its sources
// driven by blocks as MSe/MSf), which simulates bit for bit alike.
TEST(BlocksLibrary, ExpandedModelSimulatesAlike) {
  const std::string path = testing::SourcePath("examples/dc_motor_speed_control.yaml");
  const std::string flat = ModelSpecToYaml(ReadModelSpecFile(path));
  EXPECT_EQ(flat.find("blocks:"), std::string::npos);
  EXPECT_NE(flat.find("{name: supply.src, kind: \"MSe\""), std::string::npos) << flat;
  const Solution a = testing::SimulateModel(LoadModel(path), 0.5, 1e-10, 1e-12, Method::kDopri5, 0.01).solution;
  const Solution b =
      testing::SimulateModel(LoadModelFromString(flat, "flat.yaml"), 0.5, 1e-10, 1e-12, Method::kDopri5, 0.01).solution;
  ASSERT_EQ(a.rows.size(), b.rows.size());
  for (size_t i = 0; i < a.rows.size(); ++i) EXPECT_EQ(a.rows[i], b.rows[i]) << "row " << i;
  // The run settings go with the model (the expanded file was written
  // without them and needed --t-end).
  const auto given = ReadModelSpecFile(path).simulation, kept = ReadModelSpec(flat, "flat.yaml").simulation;
  ASSERT_EQ(given.size(), 2u);
  ASSERT_EQ(kept.size(), given.size()) << flat;
  for (size_t i = 0; i < given.size(); ++i) {
    EXPECT_EQ(kept[i].name, given[i].name);
    EXPECT_EQ(kept[i].text, given[i].text);
  }
}

// ---- errors ---------------------------------------------------------------

TEST(Blocks, ErrorsAreLocated) {
  {
    const Diagnostic d = ErrorOf(Alone("  - {name: d, type: pade_delay, input: 1, T: 0.1, order: 11}\n", "  y: d.y\n"));
    EXPECT_NE(d.message.find("whole number from 1 to 10"), std::string::npos) << d.message;
    EXPECT_EQ(d.where.line, 6);
    EXPECT_FALSE(d.hint.empty());
  }
  for (const char* order : {"0", "2.5", "n"}) {
    const Diagnostic d =
        ErrorOf(Alone(std::string("  - {name: d, type: pade_delay, input: 1, T: 0.1, order: ") + order + "}\n", "  y: d.y\n"));
    EXPECT_NE(d.message.find("whole number from 1 to 10"), std::string::npos) << order;
  }
  {
    const Diagnostic d = ErrorOf(Alone("  - {name: d, type: pade_delay, input: 1, T: -0.1}\n", "  y: d.y\n"));
    EXPECT_NE(d.message.find("the delay is not positive"), std::string::npos) << d.message;
  }
  {
    const Diagnostic d = ErrorOf(Alone("  - {name: g, type: gain, k: 2}\n", "  y: g.y\n"));
    EXPECT_NE(d.message.find("input 'input' of block 'g' (gain) is not connected"), std::string::npos);
    EXPECT_EQ(d.where.line, 6);
  }
  {
    const Diagnostic d = ErrorOf(Alone(R"Y(  - {name: a, type: gain, input: b.y, k: 2}
  - {name: b, type: sum, inputs: [a.y, 1]}
)Y",
                                       "  y: a.y\n"));
    EXPECT_NE(d.message.find("an algebraic loop of signals"), std::string::npos);
    EXPECT_NE(d.got.find("a.y -> b.y -> a.y"), std::string::npos) << d.got;
  }
  {
    const Diagnostic d = ErrorOf(Alone("  - {name: g, type: gain, input: 1, k: 2}\n", "  y: g.x\n"));
    EXPECT_NE(d.message.find("block 'g' has no output 'x'"), std::string::npos);
    EXPECT_NE(d.expected.find("g.y"), std::string::npos);
    EXPECT_EQ(d.where.line, 8);
  }
  {
    const Diagnostic d = ErrorOf(Alone("  - {name: g, type: gian, input: 1}\n", "  y: g.y\n"));
    EXPECT_NE(d.message.find("unknown type 'gian'"), std::string::npos);
    EXPECT_NE(d.hint.find("gain"), std::string::npos);
  }
  {
    const Diagnostic d = ErrorOf(Alone("  - {name: g, type: gain, input: 1, gain: 2}\n", "  y: g.y\n"));
    EXPECT_NE(d.message.find("'gain' is not a key of a gain block"), std::string::npos);
  }
  {
    const Diagnostic d = ErrorOf(Alone("  - {name: s, type: state_space, inputs: [1], A: [[0, 1]], B: [[1]], C: [[1]]}\n",
                                       "  y: s.y1\n"));
    EXPECT_NE(d.message.find("matrix 'A' has the wrong shape"), std::string::npos);
  }
  {
    // A loop closed through an integrator is no algebraic loop.
    EXPECT_NO_THROW(LoadModelFromString(Alone(R"Y(  - {name: a, type: gain, input: 1 - i.y, k: 2}
  - {name: i, type: integrator, input: a.y}
)Y",
                                              "  y: i.y\n"),
                                        "ok.yaml"));
  }
}

}  // namespace
}  // namespace paynter
