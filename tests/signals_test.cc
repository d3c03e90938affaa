// Signal sources (docs/model-format.md, "Signals") and constants with units
// inside expressions ("Units and domains"): closed forms for a step, a pulse
// train, a sine and a table, driven through the component library's sources;
// every bad argument's error; units in brackets against converted parameters.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>

#include "test_util.h"

namespace paynter {
namespace {

// The largest |column - exact(t)| over the rows.
double MaxError(const Solution& s, const std::string& column, const std::function<double(double)>& exact,
                double from = -1) {
  const auto t = s.Column("t"), x = s.Column(column);
  EXPECT_EQ(t.size(), x.size());
  double err = 0;
  size_t used = 0;
  for (size_t i = 0; i < t.size() && i < x.size(); ++i) {
    if (t[i] < from) continue;
    err = std::max(err, std::abs(x[i] - exact(t[i])));
    ++used;
  }
  EXPECT_GT(used, 10u);
  std::printf("  %-12s max error %.3g\n", column.c_str(), err);
  return err;
}

Solution RunYaml(const std::string& yaml, double t_end, double dt_out, Method method = Method::kDopri5) {
  return testing::SimulateModel(LoadModelFromString(yaml, "signals.yaml"), t_end, 1e-11, 1e-13, method, dt_out)
      .solution;
}

// A step of V at t0 into an RC circuit: v = V (1 - exp(-(t - t0)/RC)) from t0.
TEST(Signals, RcStepAtT0MatchesClosedForm) {
  const std::string yaml = R"Y(
parameters: {V: 5, t0: 0.0123}
definitions:
  u: V*step_at(t0)
instances:
  - {name: supply, use: "lib:electrical/voltage_source", parameters: {V: u}}
  - {name: r, use: "lib:electrical/resistor", parameters: {R: 1000}}
  - {name: c, use: "lib:electrical/capacitor", parameters: {C: 1e-5}}
elements:
  - {name: node, kind: "0"}
bonds: [[supply.p, r.p], [r.n, node], [node, c.p]]
)Y";
  const auto exact = [](double t) { return t < 0.0123 ? 0.0 : 5 * (1 - std::exp(-(t - 0.0123) / 0.01)); };
  for (Method m : {Method::kDopri5, Method::kBDF}) {
    const Solution s = RunYaml(yaml, 0.08, 1e-3, m);
    EXPECT_LT(MaxError(s, "c.v", exact), m == Method::kBDF ? 1e-7 : 1e-8);
  }
}

// A pulse train of force on a mass with a damper (m v' = F - c v): between
// edges, v relaxes exponentially toward F/c or 0; the edges are known.
TEST(Signals, MassDamperPulseTrainMatchesClosedForm) {
  const double m = 2, c = 4, F = 3, t0 = 0.1, T = 0.4, w = 0.15;
  const Solution s = RunYaml(R"Y(
definitions:
  force: 3*pulse(0.1, 0.4, 0.15)
instances:
  - {name: f, use: "lib:mechanical/force_source", parameters: {F: force}}
  - {name: body, use: "lib:mechanical/mass", parameters: {m: 2}}
  - {name: d, use: "lib:mechanical/damper", parameters: {c: 4}}
elements:
  - {name: J, kind: "1"}
bonds: [[f.p, J], [J, body.p], [J, d.p]]
)Y",
                         2.0, 0.01);
  const auto exact = [&](double t) {
    double v = 0, at = 0;
    auto relax = [&](double to, double target) {
      v = target + (v - target) * std::exp(-(to - at) * c / m);
      at = to;
    };
    for (int k = 0;; ++k) {
      const double rise = t0 + k * T, fall = rise + w;
      if (t <= rise) break;
      relax(rise, 0);
      if (t <= fall) {
        relax(t, F / c);
        return v;
      }
      relax(fall, F / c);
    }
    relax(t, 0);
    return v;
  };
  EXPECT_LT(MaxError(s, "body.v", exact), 1e-8);
  // Each edge is an event: two rows at t0 + k T and t0 + k T + w.
  const auto t = s.Column("t");
  int rows_at_edges = 0;
  for (size_t i = 1; i < t.size(); ++i) rows_at_edges += t[i] == t[i - 1];
  EXPECT_GE(rows_at_edges, 9);
}

// A sine into a series RLC: after the transient (decay rate R/2L = 50/s),
// i = V/|Z| sin(w t + phi), Z = R + j(wL - 1/(wC)), phi = -atan((wL - 1/(wC))/R).
TEST(Signals, SineDrivenRlcSteadyStateAmplitudeAndPhase) {
  const double V = 2, f = 10, R = 10, L = 0.1, C = 1e-3, w = 2 * M_PI * f;
  const Solution s = RunYaml(R"Y(
parameters: {V0: 2, f: 10}
definitions:
  wave: V0*sin(2*pi*f*t)
instances:
  - {name: supply, use: "lib:electrical/voltage_source", parameters: {V: wave}}
  - {name: r, use: "lib:electrical/resistor", parameters: {R: 10}}
  - {name: l, use: "lib:electrical/inductor", parameters: {L: 0.1}}
  - {name: c, use: "lib:electrical/capacitor", parameters: {C: 1e-3}}
elements:
  - {name: a, kind: "0"}
  - {name: b, kind: "0"}
bonds: [[supply.p, r.p], [r.n, a], [a, l.p], [l.n, b], [b, c.p]]
)Y",
                         1.5, 1e-3);
  const double X = w * L - 1 / (w * C), amplitude = V / std::hypot(R, X), phase = -std::atan2(X, R);
  // Amplitude and phase from the samples of 5 whole periods (exact for a sinusoid).
  const auto t = s.Column("t"), i = s.Column("l.i");
  double a = 0, b = 0;
  int n = 0;
  for (size_t k = 0; k < t.size(); ++k) {
    if (t[k] < 1.0 - 1e-12 || t[k] >= 1.5 - 1e-9) continue;
    a += i[k] * std::sin(w * t[k]);
    b += i[k] * std::cos(w * t[k]);
    ++n;
  }
  ASSERT_EQ(n, 500);
  a *= 2.0 / n;
  b *= 2.0 / n;
  std::printf("  amplitude %.12g (closed form %.12g), phase %.12g (%.12g)\n", std::hypot(a, b), amplitude,
              std::atan2(b, a), phase);
  EXPECT_NEAR(std::hypot(a, b), amplitude, 1e-8 * amplitude);
  EXPECT_NEAR(std::atan2(b, a), phase, 1e-8);
  EXPECT_LT(MaxError(s, "l.i", [&](double x) { return amplitude * std::sin(w * x + phase); }, 1.0), 1e-8 * amplitude);
}

// A flow table (a ramp up, a plateau, a jump down, a ramp down) into a
// capacitor: its charge is the table's integral, piecewise quadratic.
TEST(Signals, TableSourceIntegral) {
  const std::vector<double> xs = {0.5, 1.0, 2.0, 2.0, 3.0}, ys = {0.0, 4.0, 4.0, 1.0, 0.0};
  const Solution s = RunYaml(R"Y(
parameters: {top: 4}
instances:
  - {name: q, use: "lib:hydraulic/flow_source", parameters: {Q: "table([0.5, 1, 2, 2, 3], [0, top, top, 1, 0])"}}
  - {name: v, use: "lib:hydraulic/volume", parameters: {V: 1, beta: 1}}
bonds: [[q.p, v.p]]
)Y",
                         4.0, 0.01);
  const auto integral = [&](double t) {
    double sum = 0;
    for (size_t k = 0; k + 1 < xs.size(); ++k) {
      const double a = xs[k], b = std::min(xs[k + 1], t);
      if (b <= a) continue;
      const double slope = (ys[k + 1] - ys[k]) / (xs[k + 1] - xs[k]);
      sum += ys[k] * (b - a) + slope * (b - a) * (b - a) / 2;
    }
    return sum;
  };
  EXPECT_LT(MaxError(s, "v.p", integral), 1e-10);
  EXPECT_NEAR(s.Column("v.p").back(), 0.5 * 4 * 0.5 + 4 + 0.5, 1e-10);  // the area: 6.5
}

// ramp and square, and a table of a state (not of time): each against its
// closed form on an integrator.
TEST(Signals, RampSquareAndTableOfAState) {
  const Solution s = RunYaml(R"Y(
elements:
  - {name: s1, kind: Sf, flow: "ramp(0.25) + 0.5*square(0.1, 0.2)"}
  - {name: c1, kind: C, capacitance: 1}
  - {name: s2, kind: MSf, flow: "table(q_c2, [0, 1], [1, 3])"}
  - {name: c2, kind: C, capacitance: 1}
bonds: [[s1, c1], [s2, c2]]
)Y",
                         1.0, 0.005);
  // c1: integral of (t - 0.25)+ plus 0.5 * the integral of a square wave of
  // period 0.2 from 0.1 (+1 for 0.1, -1 for 0.1: a triangle of height 0.1).
  EXPECT_LT(MaxError(s, "q_c1",
                     [](double t) {
                       const double r = t > 0.25 ? (t - 0.25) * (t - 0.25) / 2 : 0;
                       if (t <= 0.1) return r;
                       const double x = std::fmod(t - 0.1, 0.2);
                       return r + 0.5 * (x < 0.1 ? x : 0.2 - x);
                     }),
            1e-9);
  // c2: q' = 1 + 2q while q < 1 (q = (e^{2t} - 1)/2 until t1 = ln(3)/2), then 3.
  const double t1 = std::log(3.0) / 2;
  EXPECT_LT(MaxError(s, "q_c2", [&](double t) { return t < t1 ? (std::exp(2 * t) - 1) / 2 : 1 + 3 * (t - t1); }),
            1e-8);
}

// Every source of the component library takes a signal for its value.
TEST(Signals, EveryLibrarySourceTakesASignal) {
  int sources = 0;
  for (const auto& dir : std::filesystem::directory_iterator(LibraryDirectory())) {
    if (!dir.is_directory()) continue;
    for (const auto& file : std::filesystem::directory_iterator(dir.path())) {
      const std::string stem = file.path().stem().string();
      if (stem.size() < 7 || stem.compare(stem.size() - 7, 7, "_source") != 0) continue;
      const ModelSpec component = ReadModelSpecFile(file.path().string());
      ASSERT_EQ(component.parameters.size(), 1u) << file.path();
      const std::string param = component.parameters[0].name;
      const std::string use = "lib:" + dir.path().filename().string() + "/" + stem;
      const Model m = LoadModelFromString(
          "instances:\n  - {name: s, use: \"" + use + "\", parameters: {" + param +
              ": \"2*step_at(1)\"}}\nelements:\n  - {name: load, kind: R, resistance: 1}\nbonds: [[s.p, load]]\n",
          "every_source.yaml");
      const Definition* d = nullptr;
      for (const auto& def : m.definitions)
        if (def.name == "s." + param) d = &def;
      ASSERT_NE(d, nullptr) << use;
      EXPECT_TRUE(GiNaC::ex(d->value.subs(m.time == 2)).is_equal(2)) << use;
      EXPECT_TRUE(GiNaC::ex(d->value.subs(m.time == GiNaC::numeric(1, 2))).is_zero()) << use;
      bool drives = false;
      for (const auto& e : m.elements)
        drives = drives || (IsSource(e.kind) && e.law.is_equal(m.Symbol("s." + param)));
      EXPECT_TRUE(drives) << use;
      ++sources;
    }
  }
  EXPECT_EQ(sources, 10);
}

// Inside a submodel, the conditionals and signal functions keep their names
// (only the submodel's own names take the instance's path).
TEST(Signals, ConditionsAndSignalsInsideASubmodel) {
  const Solution s = RunYaml(R"Y(
submodels:
  drive:
    parameters: {k: 1}
    ports: [{name: p, element: J}]
    elements:
      - {name: J, kind: "1"}
      - {name: src, kind: Sf, flow: "if(t > 0.5, k, 0) + k*step_at(0.25)"}
    bonds: [[src, J]]
instances:
  - {name: a, use: drive, parameters: {k: 2}}
elements:
  - {name: c, kind: C, capacitance: 1}
bonds: [[a.p, c]]
)Y",
                             1.0, 0.01);
  EXPECT_LT(MaxError(s, "q_c", [](double t) { return 2 * std::max(0.0, t - 0.5) + 2 * std::max(0.0, t - 0.25); }),
            1e-10);
}

// The message, the place and the hint of a bad model.
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

std::string SourceWith(const std::string& law) {
  return "parameters: {T: -0.001, x: 2}\nelements:\n  - {name: src, kind: Se, effort: \"" + law +
         "\"}\n  - {name: load, kind: R, resistance: 1}\nbonds: [[src, load]]\n";
}

TEST(Signals, BadArgumentsAreLocatedErrors) {
  struct Case {
    std::string law, message, hint;
  };
  const std::vector<Case> cases = {
      {"pulse(0, T, 1e-4)", "the period of pulse() is not positive", "rising edge"},
      {"square(0, 0)", "the period of square() is not positive", "rising edge"},
      {"pulse(0, 1, 1.5)", "the width of pulse() is not between 0 and the period", "how long each pulse lasts"},
      {"pulse(0, 1, 0)", "the width of pulse() is not between 0 and the period", "how long each pulse lasts"},
      {"table([0, 2, 1], [0, 1, 2])", "the points of table() are not in increasing order", "sort the points"},
      {"table([0, 1, 2], [0, 1])", "the lists of table() have unequal lengths", "gives y_k at x_k"},
      {"table([], [])", "table() has no points", "rises from 0 to 5"},
      {"pulse(0, 1)", "pulse() takes 3 arguments, not 2", "Signals"},
      {"step_at(t)", "the start time t0 of step_at() is not a constant", "if() or piecewise()"},
      {"9.81 [furlong]", "'furlong' is not a unit", "Units and domains"},
  };
  for (const auto& c : cases) {
    const Diagnostic d = ErrorOf(SourceWith(c.law));
    EXPECT_NE(d.message.find(c.message), std::string::npos) << c.law << ": " << d.message;
    EXPECT_EQ(d.where.file, "bad.yaml") << c.law;
    EXPECT_EQ(d.where.line, 3) << c.law;
    EXPECT_EQ(d.element, "src") << c.law;
    EXPECT_NE(d.hint.find(c.hint), std::string::npos) << c.law << ": " << d.hint;
    EXPECT_NE(d.got.find(c.law), std::string::npos) << c.law << ": " << d.got;
  }
  // A signal is a function of time: not in a constant.
  const Diagnostic d = ErrorOf(R"Y(
elements:
  - {name: cap, kind: C, capacitance: 1, initial: "step_at(1)"}
  - {name: load, kind: R, resistance: 1}
bonds: [[cap, load]]
)Y");
  EXPECT_NE(d.message.find("'step_at' may not appear in the initial value of 'cap'"), std::string::npos) << d.message;
  EXPECT_EQ(d.element, "cap");
  // A signal given to a component's constant parameter: the component's element is named.
  const Diagnostic d2 = ErrorOf(R"Y(
instances:
  - {name: c, use: "lib:electrical/capacitor", parameters: {C: "1 + step_at(1)"}}
  - {name: r, use: "lib:electrical/resistor"}
bonds: [[c.p, r.p]]
)Y");
  EXPECT_EQ(d2.element, "c.cap");
  EXPECT_NE(d2.message.find("'c.C' may not appear"), std::string::npos) << d2.message;
}

// ---- units in brackets ------------------------------------------------------

std::vector<double> Column(const std::string& yaml, const std::string& column) {
  return RunYaml(yaml, 1.0, 0.05).Column(column);
}

TEST(UnitsInLaws, AConstantWithAUnitEqualsTheConvertedParameter) {
  // g as a parameter in cm/s^2 against 981 [cm/s^2] in the law, the same
  // exact scale: the same numbers to rounding.
  const std::string with_parameter = R"Y(
parameters: {m: 2 kg, g: 981 cm/s^2, F0: 40 N, L: 50 cm}
elements:
  - {name: weight, kind: Se, effort: m*g}
  - {name: body, kind: I, inertance: m}
  - {name: spring, kind: C, stiffness: F0 / L}
  - {name: J, kind: "1"}
bonds: [[weight, J], [J, body], [J, spring]]
outputs: {x_mm: q_spring mm, v: f_body}
)Y";
  const std::string in_law = R"Y(
parameters: {m: 2 kg, L: 50 cm}
elements:
  - {name: weight, kind: Se, effort: "981 [cm/s^2] * m"}
  - {name: body, kind: I, inertance: m}
  - {name: spring, kind: C, stiffness: "40 [N] / (50) [cm]"}
  - {name: J, kind: "1"}
bonds: [[weight, J], [J, body], [J, spring]]
outputs: {x_mm: q_spring mm, v: f_body}
)Y";
  for (const std::string col : {"x_mm", "v"}) {
    const auto a = Column(with_parameter, col), b = Column(in_law, col);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-12 * (1 + std::abs(a[i]))) << col << " row " << i;
  }
  // The output in mm is 1000 times the state in m; the mass oscillates about
  // m g / k = 2 * 9.81 / 80 m.
  const Solution s = RunYaml(in_law, 1.0, 0.05);
  const auto x = s.Column("x_mm");
  const double w = std::sqrt(80.0 / 2), x0 = 2 * 9.81 / 80;
  const auto t = s.Column("t");
  for (size_t i = 0; i < t.size(); ++i) EXPECT_NEAR(x[i], 1000 * x0 * (1 - std::cos(w * t[i])), 1e-6);
  // The model knows its domain from the units written in the law.
  const Model m = LoadModelFromString(in_law, "in_law.yaml");
  EXPECT_EQ(m.bonds[0].domain, "translational");
  for (const auto& [name, sym] : m.symbols) EXPECT_NE(name[0], '[') << name;  // no unit symbol is left
}

TEST(UnitsInLaws, AMismatchNamesTheElementAndBothUnits) {
  const Diagnostic d = ErrorOf(R"Y(
parameters: {m: 2 kg}
elements:
  - {name: weight, kind: Se, effort: "9.81 [m/s] * m"}
  - {name: body, kind: I, inertance: m, domain: translational}
bonds: [[weight, body]]
)Y");
  EXPECT_EQ(d.element, "weight");
  EXPECT_EQ(d.where.line, 4);
  EXPECT_NE(d.message.find("units do not match"), std::string::npos) << d.message;
  EXPECT_NE(d.expected.find("N"), std::string::npos) << d.expected;
  EXPECT_EQ(d.got, "N s");
  // In a sum.
  const Diagnostic d2 = ErrorOf(R"Y(
parameters: {x0: 1 m}
elements:
  - {name: src, kind: Se, effort: "x0 + 2 [s]"}
  - {name: load, kind: R, resistance: 1}
bonds: [[src, load]]
)Y");
  EXPECT_EQ(d2.element, "src");
  EXPECT_NE(d2.message.find("a sum of terms with different units"), std::string::npos) << d2.message;
  // The two terms, in the order the algebra library keeps them.
  const std::string both = d2.expected + " | " + d2.got;
  EXPECT_NE(both.find("'x0' in m"), std::string::npos) << both;
  EXPECT_NE(both.find("'2*[s]' in s"), std::string::npos) << both;
}

// A mismatch found at one element whose cause is another's law, far away
// through junctions: the hint names that law and its line. (The supply's
// law is a number times a sine, so without a unit; the error comes at the
// motor's gyrator, where the electrical and the rotational side meet.)
TEST(UnitsInLaws, AMismatchNamesTheLawThatGaveTheOtherUnit) {
  const Diagnostic d = ErrorOf(R"Y(
parameters: {R: 1.2 Ohm, L: 5 mH, K: 0.05 N*m/A, J: 1e-4 kg*m^2}
elements:
  - {name: supply, kind: Se, effort: "12*sin(2*pi*20 [1/s]*t)"}
  - {name: coil, kind: "1"}
  - {name: res, kind: R, resistance: R}
  - {name: ind, kind: I, inertance: L}
  - {name: emf, kind: GY, ratio: K}
  - {name: shaft, kind: "1"}
  - {name: rotor, kind: I, inertance: J}
bonds: [[supply, coil], [coil, res], [coil, ind], [coil, emf], [emf, shaft], [shaft, rotor]]
)Y");
  EXPECT_NE(d.message.find("units do not match"), std::string::npos) << d.message;
  EXPECT_NE(d.hint.find("because of the effort '12*sin(2*pi*20 [1/s]*t)' of Se element 'supply' (line 4)"),
            std::string::npos)
      << d.element << ": " << d.hint;
}

TEST(UnitsInLaws, AModelWithoutUnitsIsUnchanged) {
  // No unit anywhere: no domain is inferred, and the law is the number written.
  const Model m = LoadModelFromString(R"Y(
parameters: {m: 2}
elements:
  - {name: weight, kind: Se, effort: 9.81 * m}
  - {name: body, kind: I, inertance: m}
bonds: [[weight, body]]
)Y",
                                      "plain.yaml");
  EXPECT_EQ(m.bonds[0].domain, "");
  EXPECT_EQ(m.bonds[0].effort_unit, "");
  EXPECT_TRUE((m.elements[0].law - GiNaC::numeric(981, 100) * m.Symbol("m")).expand().is_zero());
  // A unit in brackets inside a submodel is not renamed with the instance.
  const Model sub = LoadModelFromString(R"Y(
submodels:
  falling:
    parameters: {m: 1 kg}
    ports: [{name: p, element: J}]
    elements:
      - {name: weight, kind: Se, effort: "9.81 [m/s^2] * m"}
      - {name: J, kind: "1"}
      - {name: body, kind: I, inertance: m}
    bonds: [[weight, J], [J, body]]
instances:
  - {name: f, use: falling, parameters: {m: 3}}
elements:
  - {name: stop, kind: R, resistance: 1}
bonds: [[f.p, stop]]
)Y",
                                        "sub.yaml");
  const int w = sub.FindElement("f.weight");
  ASSERT_GE(w, 0);
  EXPECT_EQ(sub.elements[w].law_text, "9.81 [m/s^2] * f.m");
  EXPECT_TRUE((sub.elements[w].law - GiNaC::numeric(981, 100) * sub.Symbol("f.m")).expand().is_zero());
}

}  // namespace
}  // namespace paynter
