// Models with events (docs/events.md) against their closed forms: the
// bouncing ball's impacts, the stick-slip of a block on a belt, the
// conduction intervals of a half-wave rectifier; with each integrator, and
// the tape and native code alike.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>

#include <unistd.h>

#include "paynter/run.h"
#include "test_util.h"

namespace paynter {
namespace {

using testing::SimulateModel;
using testing::SourcePath;

// The times at which two rows share t (an event's before and after rows).
std::vector<double> EventTimes(const Solution& s) {
  std::vector<double> out;
  for (size_t i = 1; i < s.rows.size(); ++i)
    if (s.rows[i][0] == s.rows[i - 1][0]) out.push_back(s.rows[i][0]);
  return out;
}

double Worst(const std::vector<double>& got, const std::vector<double>& want) {
  EXPECT_EQ(got.size(), want.size());
  double d = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) d = std::max(d, std::fabs(got[i] - want[i]));
  return d;
}

// A root of f in [a, b] (f(a), f(b) of opposite signs), by bisection to the
// resolution of doubles.
double Bisect(const std::function<double(double)>& f, double a, double b) {
  double fa = f(a);
  for (int i = 0; i < 200; ++i) {
    const double c = 0.5 * (a + b);
    if (c == a || c == b) break;
    const double fc = f(c);
    if ((fc > 0) == (fa > 0)) {
      a = c;
      fa = fc;
    } else {
      b = c;
    }
  }
  return b;
}

// The first sign change of f after t in steps of dt (from the side `from`),
// located by bisection.
double NextCrossing(const std::function<double(double)>& f, double t, double dt, int from) {
  for (double a = t;; a += dt) {
    if (f(a + dt) * from < 0 && f(a) * from >= 0) return Bisect(f, a, a + dt);
    if (a > t + 1e3) return NAN;
  }
}

// ---- Bouncing ball ----------------------------------------------------------

constexpr double kG = 9.81, kH0 = 1.0, kE = 0.8, kM = 0.5;

std::vector<double> Impacts(double t_end) {
  std::vector<double> t;
  const double t1 = std::sqrt(2 * kH0 / kG), v1 = kG * t1;
  double tk = t1, ek = 1;
  while (tk < t_end) {
    t.push_back(tk);
    ek *= kE;
    tk += 2 * ek * v1 / kG;
  }
  return t;
}

TEST(Events, BouncingBallEveryIntegrator) {
  const double t_end = 3.5;
  const std::vector<double> exact = Impacts(t_end);
  ASSERT_EQ(exact.size(), 9u);
  for (Method method : {Method::kDopri5, Method::kRK4, Method::kBDF}) {
    SCOPED_TRACE(MethodName(method));
    const double rtol = method == Method::kBDF ? 1e-11 : 1e-10;
    auto r = SimulateModel(LoadModel(SourcePath("examples/bouncing_ball.yaml")), t_end, rtol, 1e-12, method, 0.01);
    const std::vector<double> times = EventTimes(r.solution);
    const double worst = Worst(times, exact);
    EXPECT_LT(worst, 1e-9);
    EXPECT_EQ(r.solution.stats.events, static_cast<long>(exact.size()));
    // Energy: constant between impacts, e^2 times smaller after each.
    const auto t = r.solution.Column("t"), energy = r.solution.Column("energy"), h = r.solution.Column("h");
    const double e0 = kM * kG * kH0;
    double drift = 0;
    size_t k = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      const bool after = i > 0 && t[i] == t[i - 1];
      if (after) ++k;
      drift = std::max(drift, std::fabs(energy[i] - e0 * std::pow(kE * kE, static_cast<double>(k))) / e0);
      EXPECT_GT(h[i], -1e-9);  // never below the floor
    }
    EXPECT_LT(drift, 1e-9);
    std::printf("%s: %zu impacts, largest time error %.3g s, largest relative energy error %.3g, %ld steps\n",
                MethodName(method).c_str(), times.size(), worst, drift, r.solution.stats.steps);
  }
}

// ---- Block on a belt: stick-slip --------------------------------------------

TEST(Events, BeltStickSlip) {
  const double m = 1, k = 10, vb = 0.5, fs = 4, fd = 3, w = std::sqrt(k / m);
  // From rest, sliding backwards relative to the belt: x = fd/k (1 - cos wt)
  // until the block reaches the belt's speed, then stuck (x grows at vb)
  // until the spring force reaches fs; then sliding again, an oscillation
  // about fd/k from x = fs/k at speed vb, until the speed is vb again (at
  // x = (2 fd - fs)/k, by symmetry), stuck again for 2 (fs - fd)/(k vb), ...
  std::vector<double> exact;
  const double t_stick = std::asin(vb * k / (fd * w)) / w;
  const double x_stick = fd / k * (1 - std::cos(w * t_stick));
  double t = t_stick + (fs / k - x_stick) / vb;
  exact = {t_stick, t};
  const double a = (fs - fd) / k, phi = std::atan2(a * w, vb);
  const double slide = (2 * M_PI - 2 * phi) / w, stuck = 2 * (fs - fd) / (k * vb);
  while (exact.size() < 8) {
    t += slide;
    exact.push_back(t);
    t += stuck;
    exact.push_back(t);
  }
  const double t_end = exact.back() + 0.1;
  for (Method method : {Method::kDopri5, Method::kRK4, Method::kBDF}) {
    SCOPED_TRACE(MethodName(method));
    auto r = SimulateModel(LoadModel(SourcePath("examples/belt_friction.yaml")), t_end,
                           method == Method::kBDF ? 1e-11 : 1e-10, 1e-12, method, 0.01);
    const std::vector<double> times = EventTimes(r.solution);
    const double worst = Worst(times, exact);
    EXPECT_LT(worst, 1e-7);
    // While stuck the block moves with the belt and the friction force stays
    // within the static limit.
    const auto tt = r.solution.Column("t"), v = r.solution.Column("v"), force = r.solution.Column("force");
    for (size_t i = 0; i < tt.size(); ++i) {
      EXPECT_LE(std::fabs(force[i]), fs + 1e-9);
      bool in_stuck = false;
      for (size_t j = 0; j + 1 < exact.size(); j += 2) in_stuck = in_stuck || (tt[i] > exact[j] + 1e-6 && tt[i] < exact[j + 1] - 1e-6);
      if (in_stuck) {
        EXPECT_NEAR(v[i], vb, 1e-9) << "t = " << tt[i];
      }
    }
    std::printf("%s: %zu stick/slip switches, largest time error %.3g s\n", MethodName(method).c_str(), times.size(),
                worst);
  }
}

// ---- Half-wave rectifier ----------------------------------------------------

TEST(Events, HalfWaveRectifierConductionIntervals) {
  const double V = 10, w = 2 * M_PI * 50, rs = 1, c = 1e-3, rl = 100, vf = 0.7;
  // Conducting: C v' = (V sin wt - vf - v)/rs - v/rl, whose solution is
  // v_p(t) + (v(t0) - v_p(t0)) exp(-a (t - t0)) with a = 1/(rs C) + 1/(rl C)
  // and v_p = P sin wt + Q cos wt + K; blocking: v = v(t0) exp(-(t - t0)/(rl C)).
  // Conduction ends where the current V sin wt - vf - v falls to zero, and
  // starts where it would rise above zero.
  const double a = 1 / (rs * c) + 1 / (rl * c), beta = V / (rs * c);
  const double p = beta * a / (a * a + w * w), q = -w * beta / (a * a + w * w), kk = -vf / (rs * c * a);
  auto vp = [&](double t) { return p * std::sin(w * t) + q * std::cos(w * t) + kk; };
  std::vector<double> exact;
  double t0 = 0, v0 = 0;
  const double t_end = 0.1;
  bool on = false;
  for (;;) {
    std::function<double(double)> current;
    if (on)
      current = [&, t0, v0](double t) { return V * std::sin(w * t) - vf - (vp(t) + (v0 - vp(t0)) * std::exp(-a * (t - t0))); };
    else
      current = [&, t0, v0](double t) { return V * std::sin(w * t) - vf - v0 * std::exp(-(t - t0) / (rl * c)); };
    const double t1 = NextCrossing(current, t0, 1e-5, on ? 1 : -1);
    if (!(t1 < t_end)) break;
    v0 = on ? vp(t1) + (v0 - vp(t0)) * std::exp(-a * (t1 - t0)) : v0 * std::exp(-(t1 - t0) / (rl * c));
    t0 = t1;
    exact.push_back(t1);
    on = !on;
  }
  ASSERT_EQ(exact.size(), 10u);
  for (Method method : {Method::kDopri5, Method::kRK4, Method::kBDF}) {
    SCOPED_TRACE(MethodName(method));
    auto r = SimulateModel(LoadModel(SourcePath("examples/half_wave_rectifier.yaml")), t_end,
                           method == Method::kBDF ? 1e-11 : 1e-10, 1e-12, method, 1e-4);
    const std::vector<double> times = EventTimes(r.solution);
    const double worst = Worst(times, exact);
    EXPECT_LT(worst, method == Method::kRK4 ? 1e-7 : 1e-9);
    // The diode's current is never negative, its voltage never above vf.
    const auto i = r.solution.Column("i_diode"), vd = r.solution.Column("v_diode");
    for (size_t j = 0; j < i.size(); ++j) {
      EXPECT_GT(i[j], -1e-9);
      EXPECT_LT(vd[j], vf + 1e-9);
    }
    std::printf("%s: %zu conduction switches, largest time error %.3g s\n", MethodName(method).c_str(),
                times.size(), worst);
  }
}

// ---- Both backends ----------------------------------------------------------

TEST(Events, TapeAndNativeAgreeBitForBit) {
  for (const char* file : {"examples/bouncing_ball.yaml", "examples/belt_friction.yaml",
                           "examples/half_wave_rectifier.yaml"}) {
    SCOPED_TRACE(file);
    auto tape = SimulateModel(LoadModel(SourcePath(file)), 0.5, 1e-8, 1e-10, Method::kDopri5, 0.01, Backend::kTape);
    auto native =
        SimulateModel(LoadModel(SourcePath(file)), 0.5, 1e-8, 1e-10, Method::kDopri5, 0.01, Backend::kNative);
    ASSERT_EQ(tape.solution.rows.size(), native.solution.rows.size());
    for (size_t i = 0; i < tape.solution.rows.size(); ++i)
      for (size_t c = 0; c < tape.solution.rows[i].size(); ++c)
        ASSERT_EQ(tape.solution.rows[i][c], native.solution.rows[i][c]) << "row " << i << " column " << c;
  }
}

// ---- Conditions in laws -----------------------------------------------------

// A spring that only pushes (a contact): if() in a law, its condition an
// event; the mass leaves the contact at the closed-form time.
TEST(Events, ConditionalLawSwitchesExactly) {
  // m x'' = -k x while x < 0 (in contact), free flight above: from x = 0 at
  // speed -v0 the contact lasts half a period pi sqrt(m/k), then the mass
  // flies up and comes back after 2 v0/g.
  auto r = SimulateModel(LoadModelFromString(R"yaml(
parameters: {m: 2, k: 800, g: 9.81, v0: 1}
elements:
  - {name: body, kind: "1"}
  - {name: mass, kind: I, inertance: m, initial: -m*v0}
  - {name: weight, kind: Se, effort: -m*g}
  - {name: ground, kind: MSe, effort: "if(x < 0, -k*x, 0)"}
bonds: [[body, mass], [weight, body], [ground, body]]
displacements:
  - {name: x, of: body}
outputs: {x: x, v: f_body}
)yaml", "contact.yaml"), 1.0, 1e-10, 1e-12, Method::kDopri5, 0.01);
  const std::vector<double> times = EventTimes(r.solution);
  // Contact from x = 0 going down: x'' = -(k/m) x - g, x = -g/w^2 (1 - cos wt) - v0/w sin wt,
  // until x = 0 again (leaving at speed v0: the contact is elastic), then a
  // flight of 2 v0/g, then contact again.
  const double m = 2, k = 800, g = 9.81, v0 = 1, w = std::sqrt(k / m);
  auto x = [&](double t) { return -g / (w * w) * (1 - std::cos(w * t)) - v0 / w * std::sin(w * t); };
  const double t_leave = NextCrossing(x, 1e-6, 1e-5, -1);
  ASSERT_EQ(times.size(), 3u + 2 * 1u);  // t = 0+, leave, land, leave, land
  EXPECT_LT(times[0], 1e-12);  // x leaves its boundary downwards at once: in contact
  EXPECT_NEAR(times[1], t_leave, 1e-9);
  EXPECT_NEAR(times[2], t_leave + 2 * v0 / g, 1e-9);
  EXPECT_NEAR(times[3], 2 * t_leave + 2 * v0 / g, 1e-9);
}

// ---- Bad input ---------------------------------------------------------------

void ExpectError(const std::string& yaml, const std::string& fragment) {
  try {
    auto r = SimulateModel(LoadModelFromString(yaml, "bad.yaml"), 0.1);
    ADD_FAILURE() << "no error; expected one with '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

constexpr const char* kBall = R"yaml(
parameters: {m: 1, g: 9.81}
elements:
  - {name: ball, kind: "1"}
  - {name: mass, kind: I, inertance: m}
  - {name: gravity, kind: Se, effort: -m*g}
bonds: [[ball, mass], [gravity, ball]]
displacements: [{name: h, of: ball, initial: 1}]
)yaml";

TEST(Events, BadInputIsAnErrorThatSaysWhy) {
  const std::string ball = kBall;
  ExpectError(ball + "events: [{when: h == 0, reset: {p_mass: 0}}]", "not a comparison paynter accepts");
  ExpectError(ball + "events: [{when: h < 0, reset: {f_ball: 0}}]", "which is not a state");
  ExpectError(ball + "events: [{when: h < 0}]", "does nothing");
  ExpectError(ball + "events: [{when: h, stop: true}]", "comparison");
  ExpectError(ball + "events: [{when: 0 < h < 1, stop: true}]", "chained comparison");
  ExpectError(ball + "outputs: {a: h < 0}", "outside a condition");
  ExpectError(ball + "outputs: {a: \"if(h, 1, 2)\"}", "comparison");
  ExpectError(ball + "outputs: {a: \"piecewise(h < 0, 1)\"}", "next argument of piecewise");
  // A friction whose effort is imposed (a force source across it).
  ExpectError(R"yaml(
elements:
  - {name: n, kind: "0"}
  - {name: mass, kind: I, inertance: 1}
  - {name: f1, kind: R, coulomb: 1}
  - {name: push, kind: Se, effort: 3}
bonds: [[n, mass], [n, f1], [push, n]]
)yaml",
              "needs the flow on its bond as input");
}

// ---- Events in a mechanism ----------------------------------------------------

// B1 built from bodies and joints, stopped where the pendulum passes gamma =
// -1 rad: under lagrange-multipliers (the projected state is the model's own)
// and parasitic joints it stops where the hand-written B1 does.
TEST(Events, AMechanismStopsWhereTheHandWrittenModelDoes) {
  auto with_stop = [](const std::string& rel, const std::string& angle) {
    std::string text = testing::ReadFileBytes(SourcePath(rel));
    const auto at = text.find("\noutputs:");
    EXPECT_NE(at, std::string::npos);
    text.insert(at + 1, "events:\n  - {name: halt, when: \"" + angle + " < -1\", stop: true}\n");
    const auto path = std::filesystem::temp_directory_path() /
                      ("paynter_events_" + std::to_string(::getpid()) + "_" + angle + ".yaml");
    testing::WriteFileBytes(path, text);
    return path;
  };
  auto stop_time = [](const std::filesystem::path& file, const std::string& constraints) {
    RunOptions o;
    o.file = file.string();
    o.t_end = 5;
    o.rtol = 1e-10;
    o.atol = 1e-12;
    o.constraints = ParseConstraintMethod(constraints);
    o.progress = false;
    o.stage_cache = false;
    PreparedModel p = PrepareModel(o);
    const Solution s = RunPrepared(p, p.compiled(), o).solution;
    EXPECT_EQ(s.stats.events, 1);
    return s.rows.back()[0];
  };
  const auto scalar = with_stop("examples/B1_pendulum.yaml", "gamma");
  const auto mechanism = with_stop("examples/B1_pendulum_3d.yaml", "pivot_angle");
  const double reference = stop_time(scalar, "auto");
  EXPECT_GT(reference, 2.5);
  EXPECT_LT(reference, 2.53);
  EXPECT_NEAR(stop_time(mechanism, "lagrange-multipliers"), reference, 1e-8);
  // The parasitic joints stretch (1e6 N/m springs): the motion differs a little.
  EXPECT_NEAR(stop_time(mechanism, "parasitic"), reference, 1e-4);
  std::filesystem::remove(scalar);
  std::filesystem::remove(mechanism);
}

// A state held at a limit by a mode and let go when its rate changes sign:
// y' = cos t, held at 1.2 while cos t > 0. Let go at pi/2, y leaves 1.2 by
// (t - pi/2)^2/2, within rounding of 1.2 for a while: the event at its exact
// zero once made each later step off zero a new crossing, 1e-9 s apart, and
// dopri5 and rk4 gave up at t = pi/2. y = 0.2 + sin t after pi/2.
TEST(Events, StateLetGoFromItsLimitLeavesWithoutChattering) {
  const std::string yaml = R"Y(
elements:
  - {name: r, kind: R, resistance: 1}
  - {name: src, kind: Se, effort: 0}
bonds: [[src, r]]
displacements:
  - {name: y, rate: "if(y >= 1.2, if(cos(t) > 0, 0, cos(t)), cos(t))", initial: 0.5}
outputs: {y: y}
)Y";
  for (Method m : {Method::kDopri5, Method::kRK4, Method::kBDF}) {
    const Solution s = SimulateModel(LoadModelFromString(yaml, "held.yaml"), 4, 1e-11, 1e-13, m, 0.01).solution;
    const auto t = s.Column("t"), y = s.Column("y");
    double err = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      const double exact = t[i] < std::asin(0.7) ? 0.5 + std::sin(t[i]) : t[i] < M_PI / 2 ? 1.2 : 0.2 + std::sin(t[i]);
      err = std::max(err, std::fabs(y[i] - exact));
    }
    EXPECT_NEAR(t.back(), 4, 1e-12);
    EXPECT_LT(err, m == Method::kBDF ? 1e-6 : 1e-8) << MethodName(m);
    EXPECT_LE(s.stats.events, 3) << MethodName(m);
  }
}

// A model with no state whose outputs hold conditions: the run once skipped
// event handling when there was no state to integrate, so step_at(0.3) and
// if(t > 0.5, 1, 0) stayed 0 throughout, under every method.
TEST(Events, ConditionsSwitchInAModelWithNoState) {
  const std::string yaml = R"Y(
elements:
  - {name: r, kind: R, resistance: 1}
  - {name: src, kind: Se, effort: 0}
bonds: [[src, r]]
outputs: {s: step_at(0.3), c: "if(t > 0.5, 1, 0)"}
)Y";
  for (Method m : {Method::kDopri5, Method::kRK4, Method::kBDF}) {
    const Solution s = SimulateModel(LoadModelFromString(yaml, "stateless.yaml"), 1, 1e-10, 1e-12, m, 0.1).solution;
    EXPECT_LT(Worst(EventTimes(s), {0.3, 0.5}), 1e-14) << MethodName(m);
    EXPECT_EQ(s.rows.back()[1], 1.0);
    EXPECT_EQ(s.rows.back()[2], 1.0);
  }
}

// An event whose condition compares a signal that jumps (step_at, square)
// turns true at the signal's own edge, with no crossing of its own: it fires
// there. Before, its indicator jumped over zero between two evaluations and
// the event never fired, without a word.
TEST(Events, AnEventOnAJumpingSignalFiresAtItsEdge) {
  const std::string yaml = R"Y(
parameters: {m: 1}
elements:
  - {name: j, kind: "1"}
  - {name: mass, kind: I, inertance: m, initial: 0}
  - {name: push, kind: Se, effort: 1}
bonds: [[push, j], [j, mass]]
events:
  - {name: kick, when: step_at(0.5) > 0.5, reset: {p_mass: 10}}
outputs: {p: p_mass}
)Y";
  for (Method m : {Method::kDopri5, Method::kRK4, Method::kBDF}) {
    const Solution s = SimulateModel(LoadModelFromString(yaml, "kick.yaml"), 1, 1e-10, 1e-12, m, 0.1).solution;
    EXPECT_LT(Worst(EventTimes(s), {0.5}), 1e-14) << MethodName(m);
    // p = t until the kick at 0.5, then 10 + (t - 0.5).
    EXPECT_NEAR(s.rows.back()[1], 10.5, 1e-9) << MethodName(m);
  }
}

TEST(Events, ASquareWaveFiresAtEveryRisingEdge) {
  // A counter: the mass feels no force; each rising edge of the square wave
  // (true at the start, so no firing at t = 0) adds one to its momentum.
  const std::string yaml = R"Y(
elements:
  - {name: j, kind: "1"}
  - {name: mass, kind: I, inertance: 1, initial: 0}
  - {name: none, kind: Se, effort: 0}
bonds: [[none, j], [j, mass]]
events:
  - {name: edge, when: "square(0, 0.2) > 0", reset: {p_mass: p_mass + 1}}
outputs: {count: p_mass}
)Y";
  const Solution s = SimulateModel(LoadModelFromString(yaml, "count.yaml"), 0.9, 1e-10, 1e-12, Method::kDopri5, 0.05)
                         .solution;
  EXPECT_EQ(s.rows.back()[1], 4.0);  // edges at 0.2, 0.4, 0.6, 0.8
}

TEST(Events, AnEventMadeTrueByAnothersResetFiresAtTheSameInstant) {
  // `first` sets p_a = 5 at t = 0.3, which makes `second`'s condition true
  // at that instant: it fires there too (once), from the values after the
  // first reset.
  const std::string yaml = R"Y(
elements:
  - {name: ja, kind: "1"}
  - {name: a, kind: I, inertance: 1, initial: 0}
  - {name: za, kind: Se, effort: 0}
  - {name: jb, kind: "1"}
  - {name: b, kind: I, inertance: 1, initial: 0}
  - {name: zb, kind: Se, effort: 0}
bonds: [[za, ja], [ja, a], [zb, jb], [jb, b]]
events:
  - {name: first, when: t > 0.3, reset: {p_a: 5}}
  - {name: second, when: p_a > 2, reset: {p_b: p_a + 2}}
outputs: {pa: p_a, pb: p_b}
)Y";
  const Solution s = SimulateModel(LoadModelFromString(yaml, "cascade.yaml"), 1, 1e-10, 1e-12, Method::kDopri5, 0.1)
                         .solution;
  EXPECT_LT(Worst(EventTimes(s), {0.3}), 1e-14);  // one event instant, two rows
  EXPECT_EQ(s.rows.back()[1], 5.0);
  EXPECT_EQ(s.rows.back()[2], 7.0);
}

}  // namespace
}  // namespace paynter
