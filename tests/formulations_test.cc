// The classical formulations derived from one bond graph, on a system small
// enough to derive by hand: a pendulum on a cart.
//
//   cart: mass Mc at x, pushed by F; pendulum: mass m at distance l from the
//   pivot on the cart, central inertia J, angle phi from the downward vertical.
//   T = 1/2 (Mc+m) x'^2 + m l cos(phi) x' phi' + 1/2 (m l^2 + J) phi'^2,
//   V = -m g l cos(phi). Lagrange's equations (by hand):
//   (Mc+m) x'' + m l cos(phi) phi'' - m l sin(phi) phi'^2 = F
//   m l cos(phi) x'' + (m l^2 + J) phi'' + m g l sin(phi) = 0
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"

namespace paynter {
namespace {

using GiNaC::ex;

const char* kCartPendulum = R"(
name: cart_pendulum
parameters: {Mc: 2, m: 0.5, l: 0.7, J: 0.02, g: 9.81, F: 0}
elements:
  - {name: push, kind: Se, effort: F}
  - {name: cart, kind: "1"}
  - {name: cart_mass, kind: I, inertance: Mc}
  - {name: swing, kind: "1"}
  - {name: bob_inertia, kind: I, inertance: J}
  - {name: tx, kind: MTF, ratio: l*cos(phi)}
  - {name: ty, kind: MTF, ratio: l*sin(phi)}
  - {name: vbx, kind: "0"}
  - {name: vby, kind: "1"}
  - {name: bob_x, kind: I, inertance: m}
  - {name: bob_y, kind: I, inertance: m}
  - {name: weight, kind: Se, effort: -m*g}
bonds:
  - [push, cart]
  - [cart, cart_mass]
  - [cart, vbx]
  - [swing, bob_inertia]
  - [swing, tx]
  - [tx, vbx]
  - [vbx, bob_x]
  - [swing, ty]
  - [ty, vby]
  - [vby, bob_y]
  - [weight, vby]
displacements:
  - {name: x, of: cart}
  - {name: phi, of: swing, initial: 1.2}
generalized: [cart, swing]
independent: [cart, swing]
outputs:
  x: x
  phi: phi
  xdot: f_cart
  phidot: f_swing
  energy: (Mc+m)*f_cart^2/2 + m*l*cos(phi)*f_cart*f_swing + (m*l^2+J)*f_swing^2/2 - m*g*l*cos(phi)
)";

struct Derived {
  Model model;
  CausalGraph graph;
  EquationSystem eqs;
};

Derived Derive(Formulation form) {
  Derived d{LoadModelFromString(kCartPendulum, "cart_pendulum.yaml"), {}, {}};
  d.graph = AssignCausality(d.model, OptionsFor(form, d.model));
  d.eqs = BuildEquations(d.model, d.graph);
  return d;
}

// The one linear block of the rhs, with everything before it substituted:
// M (rows by residual, columns by unknown name) and f = -r(u = 0).
struct Block {
  std::vector<std::string> unknowns;
  std::vector<ex> M, f;
};

Block MainBlock(const EquationSystem& sys) {
  GiNaC::exmap chain;
  Block b;
  int blocks = 0;
  for (const auto& st : sys.rhs.steps) {
    if (st.kind == ProgramStep::Kind::kAssign) {
      chain[sys.rhs.symbols[st.target]] = st.value.subs(chain);
      continue;
    }
    ++blocks;
    EXPECT_TRUE(st.linear);
    GiNaC::exmap zero;
    for (int u : st.unknowns) {
      b.unknowns.push_back(sys.rhs.slot_names[u]);
      zero[sys.rhs.symbols[u]] = 0;
    }
    for (const ex& j : st.jacobian) b.M.push_back(j.subs(chain).subs(chain));
    for (const ex& r : st.residuals) b.f.push_back((-r.subs(zero)).subs(chain).subs(chain));
  }
  EXPECT_EQ(blocks, 1);
  return b;
}

TEST(Lagrange2, CartPendulumMatchesHandDerivationSymbolically) {
  Derived d = Derive(Formulation::kLagrange2);
  EXPECT_EQ(d.eqs.form, Formulation::kLagrange2);
  ASSERT_EQ(d.eqs.generalized_velocities, (std::vector<std::string>{"v_cart", "v_swing"}));
  Block b = MainBlock(d.eqs);
  ASSERT_EQ(b.unknowns.size(), 2u);
  const Model& m = d.model;
  const ex Mc = m.Symbol("Mc"), mm = m.Symbol("m"), l = m.Symbol("l"), J = m.Symbol("J"), g = m.Symbol("g"),
           F = m.Symbol("F"), phi = m.Symbol("phi");
  // The generalized velocities are states of the equation system.
  ex v_swing;
  for (size_t i = 0; i < d.eqs.states.size(); ++i)
    if (d.eqs.state_names[i] == "v_swing") v_swing = d.eqs.states[i];
  // Hand derivation, rows (x, phi), columns (x'', phi'').
  const ex Mh[2][2] = {{Mc + mm, mm * l * cos(phi)}, {mm * l * cos(phi), mm * l * l + J}};
  const ex fh[2] = {F + mm * l * sin(phi) * pow(v_swing, 2), -mm * g * l * sin(phi)};
  const int col_x = b.unknowns[0] == "dv_cart" ? 0 : 1;
  for (int row = 0; row < 2; ++row) {
    // Which hand equation this residual is (the effort balance of one junction),
    // and its sign: compare the x'' coefficient.
    int hand_row = -1;
    ex sign;
    for (int h = 0; h < 2 && hand_row < 0; ++h)
      for (int s : {1, -1}) {
        bool same = true;
        for (int c = 0; c < 2; ++c) {
          const int hc = (c == col_x) ? 0 : 1;
          if (!TrigNormal(b.M[row * 2 + c] - s * Mh[h][hc]).is_zero()) same = false;
        }
        if (same) {
          hand_row = h;
          sign = s;
          break;
        }
      }
    ASSERT_GE(hand_row, 0) << "row " << row << ": M = " << b.M[row * 2] << ", " << b.M[row * 2 + 1];
    EXPECT_TRUE(TrigNormal(b.f[row] - sign * fh[hand_row]).is_zero()) << b.f[row] << " vs " << fh[hand_row];
  }
}

TEST(Lagrange2, LagrangeSubsystemMatchesHandDerivation) {
  Derived d = Derive(Formulation::kLagrange2);
  const LagrangeSubsystem ls = DeriveLagrangeSubsystem(d.eqs, d.model);
  ASSERT_EQ(ls.velocities.size(), 2u);
  const Model& m = d.model;
  const ex Mc = m.Symbol("Mc"), mm = m.Symbol("m"), l = m.Symbol("l"), J = m.Symbol("J"), g = m.Symbol("g"),
           phi = m.Symbol("phi");
  const ex xd = ls.velocities[0], pd = ls.velocities[1];
  // T, p~ = dT/dv, e~_q = -dT/dq (gravity enters through the weight, an effort
  // source: a non-conservative effort of this bond graph).
  const ex T = (Mc + mm) * xd * xd / 2 + mm * l * cos(phi) * xd * pd + (mm * l * l + J) * pd * pd / 2;
  EXPECT_TRUE(TrigNormal(ls.kinetic_coenergy - T).is_zero()) << ls.kinetic_coenergy;
  EXPECT_TRUE(TrigNormal(ls.momenta[0] - ((Mc + mm) * xd + mm * l * cos(phi) * pd)).is_zero()) << ls.momenta[0];
  EXPECT_TRUE(TrigNormal(ls.momenta[1] - (mm * l * cos(phi) * xd + (mm * l * l + J) * pd)).is_zero()) << ls.momenta[1];
  EXPECT_TRUE(TrigNormal(ls.conservative[0]).is_zero()) << ls.conservative[0];
  EXPECT_TRUE(TrigNormal(ls.conservative[1] - mm * l * sin(phi) * xd * pd).is_zero()) << ls.conservative[1];
  // E_q: the push on x, the weight through l sin(phi) on phi.
  const ex E1 = ls.nonconservative[1].subs(m.Symbol("e_b11") == -mm * g);
  EXPECT_TRUE(TrigNormal(E1 + mm * g * l * sin(phi)).is_zero()) << ls.nonconservative[1];
  const std::string text = d.eqs.ExplainLagrange(d.model);
  EXPECT_NE(text.find("generalized momentum"), std::string::npos) << text;
}

TEST(Hamilton, CartPendulumSolvesForTheMomentaOfTheIndependentInertias) {
  Derived d = Derive(Formulation::kHamilton);
  EXPECT_EQ(d.eqs.form, Formulation::kHamilton);
  Block b = MainBlock(d.eqs);
  EXPECT_EQ(b.unknowns, (std::vector<std::string>{"dp_cart_mass", "dp_bob_inertia"}));
  // dp/dt of the cart's own inertia is coupled to the pendulum through the bob's
  // mass: M is the hand mass matrix scaled by the inertias (q'' = p'/I).
  const ex Mc = d.model.Symbol("Mc"), mm = d.model.Symbol("m"), l = d.model.Symbol("l"), J = d.model.Symbol("J"),
           phi = d.model.Symbol("phi");
  const ex Mh[2][2] = {{Mc + mm, mm * l * cos(phi)}, {mm * l * cos(phi), mm * l * l + J}};
  const ex inertia[2] = {Mc, J};
  for (int r = 0; r < 2; ++r) {
    bool matched = false;
    for (int h = 0; h < 2; ++h)
      for (int s : {1, -1}) {
        bool same = true;
        for (int c = 0; c < 2; ++c)
          if (!TrigNormal(b.M[r * 2 + c] - s * Mh[h][c] / inertia[c]).is_zero()) same = false;
        matched = matched || same;
      }
    EXPECT_TRUE(matched) << "row " << r << ": " << b.M[r * 2] << ", " << b.M[r * 2 + 1];
  }
}

double MaxDiff(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

Solution SimulateForm(Formulation form) {
  Derived d = Derive(form);
  CompiledModel cm(d.eqs);
  SolverOptions so;
  so.t_end = 10;
  so.rtol = 1e-11;
  so.atol = 1e-12;
  return Simulate(cm, so);
}

TEST(Formulations, StateLagrangeAndHamiltonSimulationsAgreeAndConserveEnergy) {
  const Solution state = SimulateForm(Formulation::kState), lag2 = SimulateForm(Formulation::kLagrange2),
                 ham = SimulateForm(Formulation::kHamilton), lag1 = SimulateForm(Formulation::kLagrange1);
  for (const char* c : {"x", "phi", "xdot", "phidot"}) {
    EXPECT_LT(MaxDiff(lag2.Column(c), state.Column(c)), 1e-7) << c;
    EXPECT_LT(MaxDiff(ham.Column(c), state.Column(c)), 1e-7) << c;
    EXPECT_LT(MaxDiff(lag1.Column(c), state.Column(c)), 1e-7) << c;
  }
  // No force, no damping: T + V is constant.
  for (const Solution* s : {&state, &lag2, &ham}) {
    const auto e = s->Column("energy");
    EXPECT_LT(MaxDiff(e, std::vector<double>(e.size(), e.front())), 1e-8 * std::abs(e.front()));
  }
}

TEST(Procedures, ReportGeneralizedJunctionsAndProposals) {
  Model m = LoadModelFromString(kCartPendulum, "cp.yaml");
  m.generalized.clear();
  m.independent.clear();
  CausalityOptions o;
  o.procedure = CausalityProcedure::kLCAP;
  CausalGraph g = AssignCausality(m, o);
  EXPECT_TRUE(g.conflicts.empty());
  EXPECT_TRUE(g.proposed);
  ASSERT_EQ(g.generalized.size(), 2u);
  EXPECT_EQ(m.elements[g.generalized[0]].name, "cart");
  EXPECT_EQ(m.elements[g.generalized[1]].name, "swing");
  const std::string report = CausalityReport(m, g, nullptr);
  EXPECT_NE(report.find("generalized 1-junctions: cart, swing (proposed by paynter)"), std::string::npos) << report;
  // Every inertia in derivative causality: their momenta follow from the velocities.
  EXPECT_EQ(g.derivative_storage.size(), 4u);
  EXPECT_TRUE(g.integral_storage.empty());
}

TEST(Procedures, RcapLeavesUnforcedBondsRelaxed) {
  Model m = LoadModelFromString(kCartPendulum, "cp.yaml");
  CausalityOptions o;
  o.procedure = CausalityProcedure::kRCAP;
  CausalGraph g = AssignCausality(m, o);
  EXPECT_FALSE(g.relaxed.empty());
  EXPECT_THROW(BuildEquations(m, g), Error);
  EXPECT_THROW(ParseProcedure("XCAP"), Error);
  EXPECT_EQ(ParseProcedure("bhcap"), CausalityProcedure::kBHCAP);
}

}  // namespace
}  // namespace paynter
