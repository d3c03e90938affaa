#include <gtest/gtest.h>

#include "paynter/causality.h"
#include "paynter/pipeline.h"
#include "test_models.h"

namespace paynter {
namespace {

int Receiver(const Model& m, const CausalGraph& g, const std::string& bond) {
  return g.effort_to[m.FindBond(bond)];
}

TEST(Scap, SeriesRlcIsAllIntegral) {
  Model m = LoadModelFromString(testing::kSeriesRlc);
  CausalGraph g = AssignCausality(m);
  EXPECT_TRUE(g.conflicts.empty());
  EXPECT_EQ(Receiver(m, g, "bV"), m.FindElement("J"));  // Se imposes effort
  EXPECT_EQ(Receiver(m, g, "bL"), m.FindElement("L"));  // I integral: receives effort
  EXPECT_EQ(Receiver(m, g, "bC"), m.FindElement("J"));  // C integral: gives effort
  EXPECT_EQ(Receiver(m, g, "bR"), m.FindElement("J"));  // flow set by L: R gets the flow, gives the effort
  EXPECT_EQ(g.integral_storage.size(), 2u);
  EXPECT_TRUE(g.derivative_storage.empty());
}

TEST(Scap, RigidlyCoupledInertiasGiveDerivativeCausality) {
  Model m = LoadModelFromString(R"(
elements:
  - {name: T, kind: Se, effort: 1}
  - {name: w1, kind: "1"}
  - {name: J1, kind: I, inertance: 1}
  - {name: gear, kind: TF, ratio: 2}
  - {name: w2, kind: "1"}
  - {name: J2, kind: I, inertance: 1}
bonds: [[T, w1], [w1, J1], [w1, gear], [gear, w2], [w2, J2]]
)");
  CausalGraph g = AssignCausality(m);
  EXPECT_TRUE(g.conflicts.empty());
  ASSERT_EQ(g.derivative_storage.size(), 1u);
  EXPECT_EQ(m.elements[g.derivative_storage[0]].name, "J2");
}

TEST(Scap, TwoFlowSourcesOnOneJunctionConflict) {
  Model m = LoadModelFromString(testing::kTwoFlowSources);
  CausalGraph g = AssignCausality(m);
  ASSERT_FALSE(g.conflicts.empty());
  // The second source finds its bond already caused by the junction.
  EXPECT_NE(g.conflicts[0].message.find("S2"), std::string::npos) << g.conflicts[0].message;
  EXPECT_NE(g.conflicts[0].message.find("b2"), std::string::npos) << g.conflicts[0].message;
  EXPECT_NE(g.conflicts[0].message.find("at J"), std::string::npos) << g.conflicts[0].message;
  EXPECT_THROW(RequireNoConflicts(m, g), Error);
}

TEST(Scap, GyratorTurnsFlowIntoEffort) {
  Model m = LoadModelFromString(R"(
elements:
  - {name: V, kind: Se, effort: 1}
  - {name: i, kind: "1"}
  - {name: L, kind: I, inertance: 1}
  - {name: k, kind: GY, ratio: 0.5}
  - {name: w, kind: "1"}
  - {name: J, kind: I, inertance: 1}
bonds: [[V, i], [i, L], [i, k], [k, w], [w, J]]
)");
  CausalGraph g = AssignCausality(m);
  EXPECT_TRUE(g.conflicts.empty());
  EXPECT_TRUE(g.derivative_storage.empty());  // a GY does not couple the two inertias rigidly
  EXPECT_EQ(g.integral_storage.size(), 2u);
}

}  // namespace
}  // namespace paynter

namespace paynter {
namespace {

TEST(VectorConstraints, C1ReportsComponentsOfOneVectorBondWithDifferentCausality) {
  // Two scalar bonds recorded as components x and y of one vector bond 'v':
  // an effort source drives x, a flow source y, so their causalities differ.
  ModelSpec spec;
  spec.elements = {{"se", "Se", {{"effort", "1"}}}, {"jx", "1", {}}, {"rx", "R", {{"resistance", "1"}}},
                   {"sf", "Sf", {{"flow", "1"}}},   {"jy", "1", {}}, {"ry", "R", {{"resistance", "1"}}}};
  spec.bonds = {{"v_x", "se", "jx", 1, {}, "v", 0}, {"", "jx", "rx"}, {"v_y", "sf", "jy", 1, {}, "v", 1},
                {"", "jy", "ry"}};
  Model m = BuildModel(spec);
  CausalGraph g = AssignCausality(m);
  ASSERT_FALSE(g.conflicts.empty());
  EXPECT_NE(g.conflicts.back().message.find("constraint C1"), std::string::npos) << g.conflicts.back().message;
  EXPECT_NE(g.conflicts.back().message.find("'v'"), std::string::npos) << g.conflicts.back().message;
}

}  // namespace
}  // namespace paynter
