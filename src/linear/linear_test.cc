// Linear analysis against closed forms: a mass-spring-damper, a series RLC
// circuit, B1 about its hanging equilibrium, the DC motor with a gear (an
// implicit block of derivative causality); and the unit check.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>

#include "paynter/paynter.h"
#include "test_paths.h"

namespace paynter {
namespace {

struct Prepared {
  Model model;
  EquationSystem eqs;
  std::vector<std::string> inputs, params;
};

Prepared Prepare(const Model& loaded) {
  Prepared s;
  s.model = WithInputs(loaded, &s.inputs, &s.params);
  s.eqs = BuildEquations(s.model, AssignCausality(s.model));
  return s;
}

int StateIndex(const LinearModel& lin, const std::string& name) {
  for (size_t i = 0; i < lin.states.size(); ++i)
    if (lin.states[i] == name) return static_cast<int>(i);
  ADD_FAILURE() << "no state " << name;
  return 0;
}

const char* kMsd = R"(
name: msd
parameters:
  m: 2 kg
  k: 50 N/m
  c: 4 N*s/m
  F: 10 N
elements:
  - {name: force, kind: Se, effort: F, input: true}
  - {name: v, kind: "1"}
  - {name: mass, kind: I, inertance: m}
  - {name: spring, kind: C, stiffness: k}
  - {name: damper, kind: R, resistance: c}
bonds:
  - [force, v]
  - [v, mass]
  - [v, spring]
  - [v, damper]
outputs:
  x: q_spring m
  velocity: f_v
)";

TEST(Linearize, MassSpringDamperMatchesClosedForm) {
  const double m = 2, k = 50, c = 4;
  Prepared s = Prepare(LoadModelFromString(kMsd));
  ASSERT_EQ(s.inputs, std::vector<std::string>{"force"});
  const LinearModel lin = Linearize(s.eqs, s.inputs, s.params, 0, s.eqs.initial_state);
  const int p = StateIndex(lin, "p_mass"), q = StateIndex(lin, "q_spring");
  // dp/dt = F - c p/m - k q, dq/dt = p/m; x = q, velocity = p/m.
  EXPECT_NEAR(lin.A(p, p), -c / m, 1e-12);
  EXPECT_NEAR(lin.A(p, q), -k, 1e-12);
  EXPECT_NEAR(lin.A(q, p), 1 / m, 1e-12);
  EXPECT_NEAR(lin.A(q, q), 0, 1e-12);
  EXPECT_NEAR(lin.B(p, 0), 1, 1e-12);
  EXPECT_NEAR(lin.B(q, 0), 0, 1e-12);
  ASSERT_EQ(lin.outputs, (std::vector<std::string>{"x", "velocity"}));
  EXPECT_NEAR(lin.C(0, q), 1, 1e-12);
  EXPECT_NEAR(lin.C(0, p), 0, 1e-12);
  EXPECT_NEAR(lin.C(1, p), 1 / m, 1e-12);
  EXPECT_NEAR(lin.C(1, q), 0, 1e-12);
  EXPECT_NEAR(lin.D(0, 0), 0, 1e-12);
  EXPECT_NEAR(lin.D(1, 0), 0, 1e-12);
  // Eigenvalues -c/2m +- j sqrt(k/m - (c/2m)^2); zeta = c / (2 sqrt(k m)), wn = sqrt(k/m).
  const auto modes = Modes(lin.A);
  ASSERT_EQ(modes.size(), 2u);
  const double wn = std::sqrt(k / m), zeta = c / (2 * std::sqrt(k * m));
  const double wd = std::sqrt(k / m - std::pow(c / (2 * m), 2));
  EXPECT_NEAR(modes[0].lambda.real(), -c / (2 * m), 1e-12);
  EXPECT_NEAR(modes[0].lambda.imag(), -wd, 1e-12);
  EXPECT_NEAR(modes[1].lambda.imag(), wd, 1e-12);
  for (const auto& md : modes) {
    EXPECT_NEAR(md.wn, wn, 1e-12);
    EXPECT_NEAR(md.zeta, zeta, 1e-12);
  }
  // x/F = 1 / (k - m w^2 + j c w).
  for (double w : {0.5, 5.0, 20.0}) {
    const std::complex<double> h = 1.0 / std::complex<double>(k - m * w * w, c * w);
    const auto got = FrequencyResponse(lin, 0, 0, w);
    EXPECT_NEAR(std::abs(got - h), 0, 1e-12 * std::abs(h)) << w;
  }
  const auto bode = Bode(lin, 0, 0, 0.5, 20, 3);
  ASSERT_EQ(bode.size(), 3u);
  for (const auto& pt : bode) {
    const std::complex<double> h = 1.0 / std::complex<double>(k - m * pt.w * pt.w, c * pt.w);
    EXPECT_NEAR(pt.magnitude_db, 20 * std::log10(std::abs(h)), 1e-10);
    EXPECT_NEAR(pt.phase_deg, std::arg(h) * 180 / M_PI, 1e-10);
  }
  // The phase goes from 0 to -180 degrees through -90 at wn, continuously.
  EXPECT_NEAR(FrequencyResponse(lin, 0, 0, wn).real(), 0, 1e-12);
}

TEST(Linearize, SteadyStateOfTheMassSpringDamper) {
  Prepared s = Prepare(LoadModelFromString(kMsd));
  const auto x = SteadyState(s.eqs, s.params, 0, s.eqs.initial_state);
  const LinearModel lin = Linearize(s.eqs, s.inputs, s.params, 0, x);
  EXPECT_NEAR(x[StateIndex(lin, "q_spring")], 10.0 / 50, 1e-12);  // F / k
  EXPECT_NEAR(x[StateIndex(lin, "p_mass")], 0, 1e-12);
  EXPECT_NEAR(lin.y[0], 0.2, 1e-12);
}

TEST(Linearize, SeriesRlcMatchesClosedForm) {
  const double V = 5, R = 10, L = 0.1, C = 1e-3;
  const Model loaded = LoadModelFromString(R"(
parameters: {V: 5 V, R: 10 Ohm, L: 100 mH, C: 1000 uF}
elements:
  - {name: supply, kind: Se, effort: V, input: true}
  - {name: loop, kind: "1"}
  - {name: coil, kind: I, inertance: L}
  - {name: resistor, kind: R, resistance: R}
  - {name: capacitor, kind: C, capacitance: C}
bonds:
  - [supply, loop]
  - [loop, coil]
  - [loop, resistor]
  - [loop, capacitor]
outputs:
  v_cap: e_capacitor V
  current: f_loop mA
)");
  EXPECT_NEAR(loaded.parameters[2].value, L, 1e-15);  // 100 mH in H
  EXPECT_NEAR(loaded.parameters[3].value, C, 1e-18);  // 1000 uF in F
  for (const auto& b : loaded.bonds) EXPECT_EQ(b.domain, "electrical") << b.name;
  (void)V;
  Prepared s = Prepare(loaded);
  const LinearModel lin = Linearize(s.eqs, s.inputs, s.params, 0, s.eqs.initial_state);
  const int p = StateIndex(lin, "p_coil"), q = StateIndex(lin, "q_capacitor");
  EXPECT_NEAR(lin.A(p, p), -R / L, 1e-12);
  EXPECT_NEAR(lin.A(p, q), -1 / C, 1e-12 / C);
  EXPECT_NEAR(lin.A(q, p), 1 / L, 1e-12);
  EXPECT_NEAR(lin.A(q, q), 0, 1e-12);
  EXPECT_NEAR(lin.B(p, 0), 1, 1e-12);
  EXPECT_NEAR(lin.B(q, 0), 0, 1e-12);
  EXPECT_NEAR(lin.C(0, q), 1 / C, 1e-12 / C);
  EXPECT_NEAR(lin.C(0, p), 0, 1e-12);
  EXPECT_NEAR(lin.C(1, p), 1000 / L, 1e-12 * 1000 / L);  // current in mA
  EXPECT_NEAR(lin.D(0, 0), 0, 1e-12);
  const double wn = 1 / std::sqrt(L * C), zeta = R / 2 * std::sqrt(C / L);
  for (const auto& md : Modes(lin.A)) {
    EXPECT_NEAR(md.wn, wn, 1e-12 * wn);
    EXPECT_NEAR(md.zeta, zeta, 1e-12);
  }
  // v_cap / V = 1 / (LC s^2 + RC s + 1).
  for (double w : {10.0, 100.0, 1000.0}) {
    const std::complex<double> s_(0, w);
    const std::complex<double> h = 1.0 / (L * C * s_ * s_ + R * C * s_ + 1.0);
    EXPECT_NEAR(std::abs(FrequencyResponse(lin, 0, 0, w) - h), 0, 1e-12 * std::abs(h)) << w;
  }
  const auto bode = Bode(lin, 0, 0, 10, 1000, 3);
  for (const auto& pt : bode) {
    const std::complex<double> s_(0, pt.w);
    const std::complex<double> h = 1.0 / (L * C * s_ * s_ + R * C * s_ + 1.0);
    EXPECT_NEAR(pt.magnitude_db, 20 * std::log10(std::abs(h)), 1e-10) << pt.w;
    EXPECT_NEAR(pt.phase_deg, std::arg(h) * 180 / M_PI, 1e-10) << pt.w;
  }
  EXPECT_NEAR(bode[1].phase_deg, -90, 1e-10);  // at wn = 100 rad/s
}

// B1 (BENCHMARKS.md): L = 1, M = 1, Izz = 0.083, B = 10, g = 9.81, JA = Izz +
// M (L/2)^2. About gamma = -pi/2: JA gamma'' + B gamma' + M g L/2 gamma = 0.
TEST(Linearize, PendulumAboutItsHangingEquilibrium) {
  const double L = 1, M = 1, Izz = 0.083, B = 10, g = 9.81, JA = Izz + M * L * L / 4;
  Prepared s = Prepare(LoadModel(std::string(PAYNTER_SOURCE_DIR) + "/examples/B1_pendulum.yaml"));
  std::vector<double> start = s.eqs.initial_state;
  int gi = -1;
  for (size_t i = 0; i < s.eqs.state_names.size(); ++i)
    if (s.eqs.state_names[i] == "gamma") gi = static_cast<int>(i);
  ASSERT_GE(gi, 0);
  start[gi] = -1.2;
  const auto x = SteadyState(s.eqs, s.params, 0, start);
  EXPECT_NEAR(x[gi], -M_PI / 2, 1e-12);
  const LinearModel lin = Linearize(s.eqs, s.inputs, s.params, 0, x);
  const int p = StateIndex(lin, "p_bar");
  EXPECT_NEAR(lin.A(p, p), -B / JA, 1e-12);
  EXPECT_NEAR(lin.A(p, gi), -M * g * L / 2, 1e-12);
  EXPECT_NEAR(lin.A(gi, p), 1 / JA, 1e-12);
  EXPECT_NEAR(lin.A(gi, gi), 0, 1e-12);
  const double wn2 = M * g * L / (2 * JA);
  const auto modes = Modes(lin.A);
  ASSERT_EQ(modes.size(), 2u);
  const std::complex<double> prod = modes[0].lambda * modes[1].lambda, sum = modes[0].lambda + modes[1].lambda;
  EXPECT_NEAR(prod.real(), wn2, 1e-12 * wn2);
  EXPECT_NEAR(sum.real(), -B / JA, 1e-12 * B / JA);
  // Undamped (B = 0): small oscillations at wn = sqrt(M g L / (2 JA)) = 3.8379 rad/s.
  Model undamped = LoadModel(std::string(PAYNTER_SOURCE_DIR) + "/examples/B1_pendulum.yaml");
  for (auto& par : undamped.parameters)
    if (par.name == "B") par.value = 0;
  Prepared u = Prepare(undamped);
  const LinearModel lu = Linearize(u.eqs, u.inputs, u.params, 0, x);
  const auto um = Modes(lu.A);
  ASSERT_EQ(um.size(), 2u);
  for (const auto& md : um) {
    EXPECT_NEAR(md.wn, std::sqrt(wn2), 1e-12);
    EXPECT_NEAR(md.zeta, 0, 1e-12);
    EXPECT_NEAR(std::abs(md.lambda.imag()), std::sqrt(wn2), 1e-12);
  }
  EXPECT_NEAR(std::sqrt(wn2), 3.837933, 1e-6);  // sqrt(4.905 / 0.333)
}

// The gear makes one inertia derivative-causal: an implicit block, differentiated
// through by the implicit function theorem. With J = Jm + n^2 JL, b = bm + n^2 bL,
// the motor is La i' = V - Ra i - K w, J w' = K i - b w; the load angle adds 0.
TEST(Linearize, DcMotorThroughAnImplicitBlock) {
  const double Ra = 1.2, La = 0.005, K = 0.05, Jm = 2e-5, bm = 1e-5, n = 0.1, JL = 5e-3, bL = 2e-3;
  Prepared s = Prepare(LoadModel(std::string(PAYNTER_SOURCE_DIR) + "/examples/dc_motor_gear.yaml"));
  ASSERT_FALSE(s.eqs.blocks.empty());
  const LinearModel lin = Linearize(s.eqs, s.inputs, s.params, 0, s.eqs.initial_state);
  const double J = Jm + n * n * JL, b = bm + n * n * bL;
  // Characteristic polynomial of the motor: s^2 + (Ra/La + b/J) s + (Ra b + K^2)/(La J).
  const double tr = -(Ra / La + b / J), det = (Ra * b + K * K) / (La * J);
  const auto modes = Modes(lin.A);
  ASSERT_EQ(modes.size(), 3u);
  EXPECT_NEAR(std::abs(modes[0].lambda), 0, 1e-9);
  const std::complex<double> sum = modes[1].lambda + modes[2].lambda, prod = modes[1].lambda * modes[2].lambda;
  EXPECT_NEAR(sum.real(), tr, 1e-9 * std::abs(tr));
  EXPECT_NEAR(prod.real(), det, 1e-9 * det);
  EXPECT_NEAR(prod.imag(), 0, 1e-9 * det);
}

TEST(Linearize, SteadyStateThatDoesNotExistIsAnError) {
  // A constant force on a free mass has no steady state.
  Prepared s = Prepare(LoadModelFromString(R"(
parameters: {m: 2, F: 1}
elements:
  - {name: force, kind: Se, effort: F}
  - {name: v, kind: "1"}
  - {name: mass, kind: I, inertance: m}
bonds: [[force, v], [v, mass]]
)"));
  try {
    SteadyState(s.eqs, s.params, 0, s.eqs.initial_state);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no steady state"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("p_mass"), std::string::npos) << e.what();
  }
}

TEST(Linearize, InputMustBeASource) {
  EXPECT_THROW(LoadModelFromString(R"(
elements:
  - {name: s, kind: Se, effort: 1}
  - {name: r, kind: R, resistance: 1, input: true}
bonds: [[s, r]]
)"),
               Error);
}

// ---- units ---------------------------------------------------------------------

TEST(Units, ParsesSiAndDerivedUnits) {
  auto dim = [](const std::string& s) { return ParseUnit(s)->dim; };
  EXPECT_EQ(dim("kg/(m s^2)"), dim("Pa"));
  EXPECT_EQ(dim("N m"), dim("J"));
  EXPECT_EQ(dim("V*A"), dim("W"));
  EXPECT_EQ(dim("Ohm*F"), dim("s"));
  EXPECT_EQ(dim("H/Ohm"), dim("s"));
  EXPECT_EQ(dim("rpm"), dim("1/s"));
  EXPECT_EQ(dim("L/min"), dim("m^3/s"));
  EXPECT_EQ(DimensionText(dim("N m")), "N m");
  EXPECT_EQ(DimensionText(dim("kg m^2 s^-3 A^-1")), "V");
  auto scale = [](const std::string& s) { return GiNaC::ex_to<GiNaC::numeric>(GiNaC::evalf(ParseUnit(s)->scale)).to_double(); };
  EXPECT_DOUBLE_EQ(scale("uF"), 1e-6);
  EXPECT_DOUBLE_EQ(scale("kOhm"), 1e3);
  EXPECT_DOUBLE_EQ(scale("mm"), 1e-3);
  EXPECT_DOUBLE_EQ(scale("bar"), 1e5);
  EXPECT_DOUBLE_EQ(scale("h"), 3600);
  EXPECT_DOUBLE_EQ(scale("deg"), M_PI / 180);
  EXPECT_DOUBLE_EQ(scale("rpm"), 2 * M_PI / 60);
  EXPECT_DOUBLE_EQ(scale("L"), 1e-3);
  EXPECT_DOUBLE_EQ(scale("g"), 1e-3);
  EXPECT_FALSE(ParseUnit("kgg"));
  EXPECT_FALSE(ParseUnit("m^"));
}

TEST(Units, ValuesAreInSiUnitsAndBondsKnowTheirDomain) {
  const Model m = LoadModelFromString(kMsd);
  for (const auto& b : m.bonds) {
    EXPECT_EQ(b.domain, "translational") << b.name;
    EXPECT_EQ(b.effort_unit, "N");
    EXPECT_EQ(b.flow_unit, "m/s");
  }
  const Model cm = LoadModelFromString(R"(
parameters: {L: 50 cm, a: 90 deg, n: 3000 rpm}
elements:
  - {name: s, kind: Se, effort: L}
  - {name: r, kind: R, resistance: 1}
bonds: [[s, r]]
outputs:
  angle: a deg
)");
  EXPECT_DOUBLE_EQ(cm.parameters[0].value, 0.5);
  EXPECT_DOUBLE_EQ(cm.parameters[1].value, M_PI / 2);
  EXPECT_DOUBLE_EQ(cm.parameters[2].value, 100 * M_PI);
  EXPECT_DOUBLE_EQ(GiNaC::ex_to<GiNaC::numeric>(GiNaC::evalf(cm.outputs[0].value.subs(
                                                     cm.Symbol("a") == cm.parameters[1].value)))
                       .to_double(),
                   90);
}

TEST(Units, ExpandWritesUnitsBackInSi) {
  ModelSpec spec = ReadModelSpec(R"(
parameters: {V: 5 V, R: 2 kOhm, L: 100 mH}
elements:
  - {name: supply, kind: Se, effort: V, input: true}
  - {name: loop, kind: "1", domain: electrical}
  - {name: coil, kind: I, inertance: L}
  - {name: res, kind: R, resistance: R}
bonds: [[supply, loop], [loop, coil], [loop, res]]
outputs:
  i: f_loop mA
)",
                                 "a.yaml");
  const Model first = BuildModel(spec);
  const Model again = LoadModelFromString(ModelSpecToYaml(spec), "b.yaml");
  ASSERT_EQ(again.parameters.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(again.parameters[i].value, first.parameters[i].value);
  EXPECT_DOUBLE_EQ(again.parameters[1].value, 2000);
  EXPECT_EQ(again.parameters[2].unit, "H");
  EXPECT_TRUE(again.elements[0].input);
  EXPECT_EQ(again.elements[1].domain, std::vector<std::string>{"electrical"});
  for (const auto& b : again.bonds) EXPECT_EQ(b.domain, "electrical");
  const GiNaC::ex i1 = first.outputs[0].value.subs(first.Symbol("f_loop") == 0.25);
  const GiNaC::ex i2 = again.outputs[0].value.subs(again.Symbol("f_loop") == 0.25);
  EXPECT_DOUBLE_EQ(GiNaC::ex_to<GiNaC::numeric>(GiNaC::evalf(i1)).to_double(), 250);
  EXPECT_DOUBLE_EQ(GiNaC::ex_to<GiNaC::numeric>(GiNaC::evalf(i2)).to_double(), 250);
}

TEST(Units, CapacitanceInKilogramsOnAnElectricalBondIsReported) {
  try {
    LoadModelFromString(R"(
parameters: {V: 5 V, C: 1 kg}
elements:
  - {name: supply, kind: Se, effort: V}
  - {name: cap, kind: C, capacitance: C}
bonds: [[supply, cap]]
)",
                        "bad.yaml");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string w = e.what();
    EXPECT_EQ(e.diagnostic().element, "cap");
    EXPECT_EQ(e.diagnostic().where.file, "bad.yaml");
    EXPECT_GT(e.diagnostic().where.line, 0);
    EXPECT_EQ(e.diagnostic().got, "kg");
    EXPECT_EQ(e.diagnostic().expected.substr(0, 1), "F") << w;
    EXPECT_NE(w.find("electrical"), std::string::npos) << w;
  }
}

TEST(Units, MotorGyratorJoinsElectricalAndRotational) {
  const Model m = LoadModelFromString(R"(
parameters: {V: 12 V, R: 1.2 Ohm, L: 5 mH, K: 0.05 N*m/A, J: 2e-5 kg*m^2, b: 1e-5 N*m*s/rad}
elements:
  - {name: supply, kind: Se, effort: V}
  - {name: armature, kind: "1"}
  - {name: res, kind: R, resistance: R}
  - {name: ind, kind: I, inertance: L}
  - {name: emf, kind: GY, ratio: K}
  - {name: rotor, kind: "1"}
  - {name: inertia, kind: I, inertance: J}
  - {name: friction, kind: R, resistance: b}
bonds:
  - [supply, armature]
  - [armature, res]
  - [armature, ind]
  - [armature, emf]
  - {name: shaft, from: emf, to: rotor}
  - [rotor, inertia]
  - [rotor, friction]
)");
  EXPECT_EQ(m.bonds[0].domain, "electrical");
  EXPECT_EQ(m.bonds[3].domain, "electrical");
  EXPECT_EQ(m.bonds[4].domain, "rotational");
  EXPECT_EQ(m.bonds[6].domain, "rotational");
  EXPECT_NE(DomainReport(m).find("rotational (effort N m, flow 1/s): shaft"), std::string::npos) << DomainReport(m);
  // A torque constant in N/A (not N m/A) is reported at the gyrator.
  try {
    LoadModelFromString(R"(
parameters: {V: 12 V, K: 0.05 N/A, J: 2e-5 kg*m^2}
elements:
  - {name: supply, kind: Se, effort: V}
  - {name: emf, kind: GY, ratio: K}
  - {name: inertia, kind: I, inertance: J}
bonds: [[supply, emf], [emf, inertia]]
)");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostic().element, "emf") << e.what();
  }
}

TEST(Units, DeclaredDomainAndLawsAreChecked) {
  // A declared domain with a mass where a capacitance belongs.
  EXPECT_THROW(LoadModelFromString(R"(
parameters: {m: 1 kg}
elements:
  - {name: s, kind: Se, effort: 1, domain: electrical}
  - {name: c, kind: C, capacitance: m}
bonds: [[s, c]]
)"),
               Error);
  // A sum of unlike terms in a parameter.
  EXPECT_THROW(LoadModelFromString(R"(
parameters: {a: 1 m, b: 1 s, c: a + b}
elements:
  - {name: s, kind: Se, effort: c}
  - {name: r, kind: R, resistance: 1}
bonds: [[s, r]]
)"),
               Error);
  // An output whose expression is not in its unit.
  EXPECT_THROW(LoadModelFromString(std::string(kMsd) + "  bad: f_v N\n"), Error);
  // A trailing word that is no unit.
  EXPECT_THROW(LoadModelFromString(R"(
parameters: {m: 2 kgg}
elements:
  - {name: s, kind: Se, effort: m}
  - {name: r, kind: R, resistance: 1}
bonds: [[s, r]]
)"),
               Error);
  // sin of a time in a model with units.
  EXPECT_THROW(LoadModelFromString(R"(
parameters: {F: 1 N}
elements:
  - {name: s, kind: Se, effort: F*sin(t)}
  - {name: r, kind: R, resistance: 1}
bonds: [[s, r]]
)"),
               Error);
  // ...but sin(w t) with w in rad/s is fine, and a nonlinear spring in N/m^3 too.
  const Model ok = LoadModelFromString(R"(
parameters: {F: 1 N, w: 3 rad/s, k: 5 N/m, k3: 2 N/m^3, m: 1 kg}
elements:
  - {name: s, kind: Se, effort: F*sin(w*t)}
  - {name: j, kind: "1"}
  - {name: mass, kind: I, inertance: m}
  - {name: spring, kind: C, effort: k*q + k3*q^3}
bonds: [[s, j], [j, mass], [j, spring]]
)");
  EXPECT_EQ(ok.bonds[2].domain, "translational");
}

}  // namespace
}  // namespace paynter
