// The formulation table (paynter/formulations.h) and the constraint
// methods' strategies (paynter/constraint_method.h): the table agrees with
// the names and procedures the equations use, with the errors paynter gives,
// and with the table of docs/methods.md.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "paynter/constraint_method.h"
#include "paynter/formulations.h"
#include "paynter/pipeline.h"
#include "paynter/run.h"
#include "test_util.h"

namespace paynter {
namespace {

TEST(FormulationTable, TableAgreesWithTheNamesAndProceduresOfTheEquations) {
  for (const FormulationRow& row : kFormulations) {
    EXPECT_EQ(ParseFormulation(row.name), row.form) << row.name;
    EXPECT_EQ(FormulationName(row.form), row.name);
    EXPECT_EQ(&FormulationOf(row.form), &row);
    Model empty;
    EXPECT_EQ(OptionsFor(row.form, empty).procedure, row.procedure) << row.name;
    // auto and the multipliers combine with every form.
    for (bool mechanism : {false, true}) {
      EXPECT_TRUE(Combines(row.form, ConstraintMethod::kAuto, mechanism)) << row.name;
      EXPECT_TRUE(Combines(row.form, ConstraintMethod::kLagrangeMultipliers, mechanism)) << row.name;
    }
  }
}

TEST(FormulationTable, ACombinationThatDoesNotApplyIsALocatedErrorNamingTheFormsThatDo) {
  try {
    RequireCombination("m.yaml", Formulation::kLagrange2, ConstraintMethod::kZcp, true);
    FAIL() << "lagrange2 with zcp was accepted";
  } catch (const Error& e) {
    const Diagnostic& d = e.diagnostic();
    EXPECT_EQ(d.where.file, "m.yaml");
    EXPECT_EQ(d.message, "--constraints zcp does not combine with --form lagrange2");
    EXPECT_EQ(d.expected,
              "--form state with --constraints, or --form lagrange1|lagrange2|hamilton|boltzmann-hamel alone");
  }
  // Hamilton's form keeps a hand-written bond graph's constraint sources.
  EXPECT_NO_THROW(RequireCombination("m.yaml", Formulation::kHamilton, ConstraintMethod::kZcp, false));
  EXPECT_THROW(RequireCombination("m.yaml", Formulation::kHamilton, ConstraintMethod::kZcp, true), Error);
  EXPECT_TRUE(CombinationDependsOnModel(Formulation::kHamilton, ConstraintMethod::kParasitic));
  EXPECT_FALSE(CombinationDependsOnModel(Formulation::kLagrange1, ConstraintMethod::kParasitic));
}

// docs/methods.md's formulation table (made by running paynter) says for
// every `simulate --form F --constraints M` and benchmark whether it works or
// which error it gives: "does not combine" exactly where the code's table
// says the combination does not apply to that model.
TEST(FormulationTable, DocsTableAgreesOnWhichCombinationsAreErrors) {
  std::ifstream in(testing::SourcePath("docs/methods.md"));
  ASSERT_TRUE(in) << "docs/methods.md";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const size_t begin = doc.find("<!-- formulation table:"), end = doc.find("<!-- end of the formulation table -->");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  const std::string table = doc.substr(begin, end - begin);
  // The footnotes: label -> text.
  std::map<std::string, std::string> notes;
  const std::regex note(R"(^- \[([^\]]+)\] (.*)$)");
  // The columns: label -> example file.
  const std::map<std::string, std::string> files = {
      {"B1", "B1_pendulum.yaml"},
      {"B1 3D", "B1_pendulum_3d.yaml"},
      {"B2 iso", "B2_slider_crank_isostatic.yaml"},
      {"B2 hyper", "B2_slider_crank_hyperstatic.yaml"},
      {"B3", "B3_quick_return.yaml"},
      {"B4", "B4_spatial_arm.yaml"}};
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, note)) notes[m[1]] = m[2];
    if (line.rfind("| ", 0) != 0) continue;
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream cs(line.substr(1));
    while (std::getline(cs, cell, '|')) {
      const size_t a = cell.find_first_not_of(' '), b = cell.find_last_not_of(' ');
      cells.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
    }
    if (header.empty())
      header = cells;
    else if (cells[0] != "---")
      rows.push_back(cells);
  }
  ASSERT_GE(header.size(), 3u);
  std::map<std::string, bool> mechanism;
  for (size_t c = 2; c < header.size(); ++c) {
    ASSERT_TRUE(files.count(header[c])) << header[c];
    mechanism[header[c]] =
        LoadSpec(ModelSource::File(testing::SourcePath("examples/" + files.at(header[c]))), {}, LoadPass::kSubmodels)
            .multibody.present;
  }
  int checked = 0, refused = 0;
  const std::regex simulate(R"(`simulate --form ([a-z0-9-]+)`)"), method(R"(`([a-z-]+)`)"),
      error(R"(error \[([^\]]+)\])");
  for (const auto& r : rows) {
    std::smatch f, m;
    if (!std::regex_match(r[0], f, simulate)) continue;
    ASSERT_TRUE(std::regex_match(r[1], m, method)) << r[1];
    const Formulation form = ParseFormulation(f[1]);
    const ConstraintMethod constraints = ParseConstraintMethod(m[1]);
    for (size_t c = 2; c < r.size() && c < header.size(); ++c) {
      std::smatch e;
      const bool is_error = std::regex_search(r[c], e, error);
      const bool not_combining =
          is_error && notes[e[1]].find(fmt::format("does not combine with --form {}", f[1].str())) != std::string::npos;
      EXPECT_EQ(not_combining, !Combines(form, constraints, mechanism[header[c]]))
          << "--form " << f[1] << " --constraints " << m[1] << " on " << header[c] << ": docs say '" << r[c] << "'";
      ++checked;
      refused += not_combining;
    }
  }
  EXPECT_EQ(checked, 5 * 5 * 6);  // every form, every method, every benchmark
  EXPECT_GT(refused, 0);
}

// The strategies: each answers for its own method, and the questions the
// pipeline asks have the answers the methods' behaviour needs.
TEST(ConstraintMethodStrategies, EachMethodHasItsStrategy) {
  EXPECT_EQ(StrategyFor(ConstraintMethod::kAuto).method(), ConstraintMethod::kAuto);
  for (ConstraintMethod m : ConstraintMethods()) {
    EXPECT_EQ(StrategyFor(m).method(), m) << ConstraintMethodName(m);
    EXPECT_EQ(ParseConstraintMethod(ConstraintMethodName(m)), m);
    EXPECT_EQ(StrategyFor(m).RewritesSpec(), m == ConstraintMethod::kParasitic);
    EXPECT_EQ(StrategyFor(m).CarriedByFmu(), m == ConstraintMethod::kParasitic);
    EXPECT_EQ(IntegratorName(m, Method::kDopri5), m == ConstraintMethod::kZcp ? "ida" : "dopri5");
  }
  EXPECT_EQ(ConstraintMethods().size(), 4u);
}

}  // namespace
}  // namespace paynter
