// Golden files: the causality report (strokes, generalized junctions,
// constrained junctions, multipliers, loops) and the zero-order causal paths of
// B3 under each procedure, compared as text. Run with PAYNTER_UPDATE_GOLDEN=1 to
// rewrite them after an intended change, and review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "test_util.h"

namespace paynter {
namespace {

std::string Report(const std::string& model_file, CausalityProcedure proc) {
  Model m = LoadModel(testing::SourcePath(model_file));
  CausalityOptions o;
  o.procedure = proc;
  if (proc == CausalityProcedure::kLaCAP) o.generalized = m.generalized;
  CausalGraph g = AssignCausality(m, o);
  EquationSystem eqs = BuildEquations(m, g);
  return CausalityReport(m, g, &eqs) + "\n" + ZeroOrderPathReport(m, FindZeroOrderPaths(m, g));
}

void ExpectGolden(const std::string& text, const std::string& golden) {
  const std::string path = testing::SourcePath("tests/golden/" + golden);
  if (std::getenv("PAYNTER_UPDATE_GOLDEN")) {
    std::ofstream(path) << text;
    return;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing golden file " << path << " (run with PAYNTER_UPDATE_GOLDEN=1)";
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(text, ss.str()) << "differs from " << path;
}

TEST(Golden, B3Scap) { ExpectGolden(Report("examples/B3_quick_return.yaml", CausalityProcedure::kSCAP), "B3.SCAP.txt"); }
TEST(Golden, B3HaCap) {
  ExpectGolden(Report("examples/B3_quick_return.yaml", CausalityProcedure::kHaCAP), "B3.HaCAP.txt");
}
TEST(Golden, B3LaCap) {
  const std::string text = Report("examples/B3_quick_return.yaml", CausalityProcedure::kLaCAP);
  // What seed 000 describes (Fig. 5): generalized junctions of theta1 and
  // theta3, one constrained 0-junction (the ram's vertical velocity) and its multiplier.
  EXPECT_NE(text.find("generalized 1-junctions: crank, rod (from the model)"), std::string::npos) << text;
  EXPECT_NE(text.find("constrained 0-junctions: yC5dot"), std::string::npos) << text;
  EXPECT_NE(text.find("lambda_yC5dot"), std::string::npos) << text;
  ExpectGolden(text, "B3.LaCAP.txt");
}
TEST(Golden, B3Lcap) { ExpectGolden(Report("examples/B3_quick_return.yaml", CausalityProcedure::kLCAP), "B3.LCAP.txt"); }

}  // namespace
}  // namespace paynter
