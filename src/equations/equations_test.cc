#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "equations_internal.h"
#include "paynter/equations.h"
#include "paynter/pipeline.h"
#include "paynter/run.h"
#include "test_models.h"
#include "test_paths.h"

namespace paynter {
namespace {

using GiNaC::ex;

// d/dt x_i as a closed form, by substituting the rhs program's assignments.
ex ClosedForm(const EquationSystem& sys, const std::string& state) {
  GiNaC::exmap chain;
  for (const auto& st : sys.rhs.steps) {
    EXPECT_EQ(st.kind, ProgramStep::Kind::kAssign);
    chain[sys.rhs.symbols[st.target]] = st.value.subs(chain);
  }
  for (size_t i = 0; i < sys.states.size(); ++i)
    if (sys.state_names[i] == state) return chain.at(sys.derivatives[i]);
  ADD_FAILURE() << "no state " << state;
  return 0;
}

const char* kRlc = R"(
parameters: {V: 5, R: 10, L: 0.1, C: 0.001}
elements:
  - {name: src, kind: Se, effort: V}
  - {name: J, kind: "1"}
  - {name: coil, kind: I, inertance: L}
  - {name: res, kind: R, resistance: R}
  - {name: cap, kind: C, capacitance: C}
bonds: [[src, J], [J, coil], [J, res], [J, cap]]
)";

TEST(BuildEquations, SeriesRlcMatchesHandDerivation) {
  Model m = LoadModelFromString(kRlc);
  EquationSystem sys = BuildEquations(m, AssignCausality(m));
  ASSERT_EQ(sys.state_names, (std::vector<std::string>{"p_coil", "q_cap"}));
  EXPECT_TRUE(sys.blocks.empty());
  const ex V = m.Symbol("V"), R = m.Symbol("R"), L = m.Symbol("L"), C = m.Symbol("C");
  const ex p = m.Symbol("p_coil"), q = m.Symbol("q_cap");
  EXPECT_EQ((ClosedForm(sys, "p_coil") - (V - R * p / L - q / C)).expand(), 0);
  EXPECT_EQ((ClosedForm(sys, "q_cap") - p / L).expand(), 0);
  const std::string text = sys.ToText(m);
  EXPECT_NE(text.find("d/dt p_coil ="), std::string::npos) << text;
  const std::string tex = sys.ToLatex(m);
  EXPECT_NE(tex.find("\\dot{p}_{\\mathrm{coil}}"), std::string::npos) << tex;
}

TEST(BuildEquations, DerivativeCausalityGivesLinearImplicitBlock) {
  Model m = LoadModelFromString(testing::kGearCoupledInertias);
  EquationSystem sys = BuildEquations(m, AssignCausality(m));
  ASSERT_EQ(sys.states.size(), 1u);
  ASSERT_EQ(sys.blocks.size(), 1u);
  EXPECT_TRUE(sys.blocks[0].derivative_causality);
  EXPECT_TRUE(sys.blocks[0].linear);
  EXPECT_EQ(sys.blocks[0].unknowns, std::vector<std::string>{"dp_I1"});
  // M = 1 + n^2 J2 / J1 (from p1' = T - n * J2 * d/dt(n p1 / J1)).
  const ProgramStep* block = nullptr;
  for (const auto& st : sys.rhs.steps)
    if (st.kind == ProgramStep::Kind::kBlock) block = &st;
  ASSERT_NE(block, nullptr);
  ASSERT_EQ(block->jacobian.size(), 1u);
  const ex J1 = m.Symbol("J1"), J2 = m.Symbol("J2"), n = m.Symbol("n");
  EXPECT_EQ((block->jacobian[0] - (1 + n * n * J2 / J1)).normal(), 0) << block->jacobian[0];
}

TEST(BuildEquations, ResistiveLoopIsALinearAlgebraicLoop) {
  Model m = LoadModelFromString(testing::kResistiveLoop);
  EquationSystem sys = BuildEquations(m, AssignCausality(m));
  ASSERT_EQ(sys.blocks.size(), 1u);
  EXPECT_FALSE(sys.blocks[0].derivative_causality);
  EXPECT_TRUE(sys.blocks[0].linear);
  EXPECT_NE(sys.blocks[0].label.find("algebraic loop"), std::string::npos);
}

TEST(BuildEquations, InvertedNonlinearResistorIsANonlinearBlock) {
  Model m = LoadModelFromString(R"(
elements:
  - {name: V, kind: Se, effort: 1}
  - {name: J, kind: "1"}
  - {name: cap, kind: C, capacitance: 1}
  - {name: r, kind: R, effort: f + f^3}
bonds: [[V, J], [J, cap], [J, r]]
)");
  EquationSystem sys = BuildEquations(m, AssignCausality(m));
  ASSERT_EQ(sys.blocks.size(), 1u);
  EXPECT_FALSE(sys.blocks[0].linear);
  EXPECT_EQ(sys.blocks[0].unknowns, std::vector<std::string>{"f_b3"});
}

// BuildEquationStructure (what `paynter check` forms) finds the states, the
// blocks and the errors that BuildEquations finds, on every example (the
// Newton-Euler form of the mechanisms: constraint-force blocks) and on
// mechanisms in joint coordinates (derivative causality), without programs.
TEST(BuildEquationStructure, MatchesBuildEquationsOnTheExamples) {
  int systems = 0, blocks = 0, derivative = 0, loops = 0;
  auto compare = [&](const std::string& path, Formulation form) {
    SCOPED_TRACE(path + " --form " + FormulationName(form));
    Analysis a = Analyze(path, form);
    if (!a.graph.conflicts.empty()) return;
    std::string full_error, structure_error;
    EquationSystem full, structure;
    try {
      full = BuildEquations(a.model, a.graph);
    } catch (const Error& e) {
      full_error = e.what();
    }
    try {
      structure = BuildEquationStructure(a.model, a.graph);
    } catch (const Error& e) {
      structure_error = e.what();
    }
    EXPECT_EQ(structure_error, full_error);
    if (!full_error.empty()) return;
    ++systems;
    EXPECT_EQ(structure.state_names, full.state_names);
    EXPECT_EQ(structure.state_origin, full.state_origin);
    EXPECT_EQ(structure.initial_state, full.initial_state);
    EXPECT_EQ(structure.form, full.form);
    ASSERT_EQ(structure.blocks.size(), full.blocks.size());
    for (size_t k = 0; k < full.blocks.size(); ++k) {
      EXPECT_EQ(structure.blocks[k].variables, full.blocks[k].variables);
      EXPECT_EQ(structure.blocks[k].unknowns, full.blocks[k].unknowns);
      EXPECT_EQ(structure.blocks[k].label, full.blocks[k].label);
      EXPECT_EQ(structure.blocks[k].derivative_causality, full.blocks[k].derivative_causality);
      EXPECT_FALSE(structure.blocks[k].linear);  // not computed
      ++blocks;
      ++(full.blocks[k].derivative_causality ? derivative : loops);
    }
    EXPECT_TRUE(structure.rhs.steps.empty());
    EXPECT_TRUE(structure.outputs.steps.empty());
    EXPECT_EQ(structure.num_slots, 0);
  };
  for (const auto& entry : std::filesystem::directory_iterator(std::string(PAYNTER_SOURCE_DIR) + "/examples"))
    if (entry.path().extension() == ".yaml") compare(entry.path().string(), Formulation::kState);
  for (const char* mechanism : {"B1_pendulum_3d", "B3_quick_return", "double_pendulum_library"})
    compare(std::string(PAYNTER_SOURCE_DIR) + "/examples/" + mechanism + ".yaml", Formulation::kLagrange2);
  EXPECT_GE(systems, 25);
  EXPECT_GT(derivative, 0);
  EXPECT_GT(loops, 0);
  EXPECT_GT(blocks, derivative);
}

// An event that resets a storage element in derivative causality is the same
// error without the programs as with them.
TEST(BuildEquationStructure, RefusesAResetOfANonState) {
  const std::string model = std::string(testing::kGearCoupledInertias) + "events: [{when: t > 1, reset: {p_I2: 0}}]\n";
  Model m = LoadModelFromString(model);
  const CausalGraph g = AssignCausality(m);
  for (bool structure : {false, true}) {
    try {
      if (structure) BuildEquationStructure(m, g);
      else BuildEquations(m, g);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("resets 'p_I2', which is not a state"), std::string::npos) << e.what();
    }
  }
}

// The same expression, built from symbols made in two orders (GiNaC orders
// terms and factors by hashes that follow the symbols' serial numbers, as in
// another process they follow addresses), prints the same: sorted, and each
// sum inside a product with its first term positive.
TEST(PrintCanonical, DoesNotDependOnGiNaCsOrder) {
  auto build = [](bool reversed, bool latex) {
    std::map<std::string, GiNaC::symbol> s;
    std::vector<std::string> names = {"alpha", "b", "c2", "theta1", "theta2", "x"};
    if (reversed) std::reverse(names.begin(), names.end());
    for (const auto& n : names) s.emplace(n, GiNaC::symbol(n));
    const ex a = s["alpha"], b = s["b"], c = s["c2"], t1 = s["theta1"], t2 = s["theta2"], x = s["x"];
    const ex e = (a - b) * x * GiNaC::pow(a * a + b * b, -1) + GiNaC::pow(b - c, 2) * GiNaC::sin(t2 - t1) -
                 GiNaC::numeric(1, 2) * c * GiNaC::pow(x - a, 3) + (t1 - t2) * (c - x) / (b - a);
    return PrintCanonical(e, latex);
  };
  for (bool latex : {false, true}) {
    const std::string forward = build(false, latex), backward = build(true, latex);
    EXPECT_EQ(forward, backward) << (latex ? "latex" : "text");
  }
  const std::string text = build(false, false);
  // Products' sums lead with a positive term: (alpha-b), not (b-alpha) or -(alpha-b) both ways.
  EXPECT_NE(text.find("(alpha-b)"), std::string::npos) << text;
  EXPECT_EQ(text.find("(b-alpha)"), std::string::npos) << text;
  EXPECT_NE(text.find("sin(theta2-theta1)"), std::string::npos) << text;
}

}  // namespace
}  // namespace paynter

namespace paynter {
namespace {

// Differentiate gives GiNaC's derivative, the same expression term for term
// (compare() == 0: the programs built from it are the same), on sums,
// products with powers and coefficients, nested products and functions.
TEST(Differentiate, IsGiNaCsDerivative) {
  GiNaC::symbol x("x"), y("y"), z("z"), a("a"), b("b");
  GiNaC::ex chain = x;
  for (int i = 0; i < 12; ++i) chain = (i % 2 ? a : b) * GiNaC::symbol("r" + std::to_string(i)) * chain + i * y;
  const std::vector<GiNaC::ex> cases = {
      GiNaC::ex(3),
      x,
      y,
      3 * x * y * z,
      a * b,
      2 * GiNaC::pow(x, 3) * y - GiNaC::pow(x, -2) / (3 * a),
      GiNaC::pow(x * y + 1, GiNaC::numeric(1, 2)) * a,
      GiNaC::pow(x, y) * z + GiNaC::pow(a, x),
      GiNaC::sin(x * y) * GiNaC::cos(a + x) * b + GiNaC::exp(2 * x),
      (x + a) * (x + b) * (y + 1) / (z - x),
      GiNaC::numeric(5, 2) * a * (b * x + 1.25 * y * (a * x + 0.8 * z * (b * x - y))),
      chain,
      GiNaC::pow(chain, 2) - chain * x,
  };
  for (const GiNaC::ex& e : cases)
    for (const GiNaC::symbol& s : {x, y, z}) {
      const GiNaC::ex want = e.diff(s), got = Differentiate(e, s);
      EXPECT_EQ(got.compare(want), 0) << "d/d" << s << " of " << e << ": " << got << " against " << want;
    }
}

}  // namespace
}  // namespace paynter
