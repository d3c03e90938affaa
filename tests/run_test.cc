// The shared run API (paynter/run.h): what the commands, the Python module
// and sweeps build on.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <thread>

#include "paynter/run.h"
#include "test_util.h"

namespace paynter {
namespace {

using testing::SourcePath;

RunOptions B1(double t_end = 2) {
  RunOptions o;
  o.file = SourcePath("examples/B1_pendulum.yaml");
  o.t_end = t_end;
  o.rtol = 1e-9;
  o.atol = 1e-12;
  o.progress = false;
  o.stage_cache = false;
  return o;
}

// A run of the prepared `p` with `params` gives the rows of a model prepared
// with them, bit for bit, and other rows than a run without them.
void ExpectPerRunEqualsPrepared(RunOptions o, const PreparedModel& p,
                                const std::vector<std::pair<std::string, double>>& params) {
  o.params = params;
  const Solution a = RunPrepared(p, p.compiled(), o).solution;
  PreparedModel q = PrepareModel(o);
  const Solution b = RunPrepared(q, q.compiled(), o).solution;
  ASSERT_EQ(a.rows.size(), b.rows.size());
  EXPECT_EQ(a.rows, b.rows);
  o.params.clear();
  const Solution c = RunPrepared(p, p.compiled(), o).solution;
  EXPECT_NE(a.rows.back(), c.rows.back());
}

// A number written with a unit (`La: 5 mH`) is a number as much as `2` is:
// a run sets it without a rebuild (before, it counted as derived, so sweeps
// over it rebuilt the model for every run), with the result of a model
// prepared with it.
TEST(RunApi, ANumberWithAUnitIsSettableLikeAPlainNumber) {
  RunOptions o;
  o.file = SourcePath("examples/dc_motor_units.yaml");
  o.t_end = 0.05;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  o.progress = false;
  o.stage_cache = false;
  PreparedModel p = PrepareModel(o);
  for (const char* name : {"La", "Ra", "J", "K"}) EXPECT_TRUE(p.parameter_settable(name)) << name;
  ExpectPerRunEqualsPrepared(o, p, {{"La", 0.004}});  // the inductance changes the current
}

TEST(RunApi, ParametersPerRunEqualAModelPreparedWithThem) {
  RunOptions o = B1();
  PreparedModel p = PrepareModel(o);
  EXPECT_TRUE(p.parameter_settable("B"));
  EXPECT_FALSE(p.parameter_settable("M"));   // JA = Izz + M*(L/2)^2
  EXPECT_FALSE(p.parameter_settable("JA"));
  ExpectPerRunEqualsPrepared(o, p, {{"B", 3.5}});  // the damping changes the motion
}

TEST(RunApi, ADerivedParametersSourceNeedsANewPreparation) {
  RunOptions o = B1();
  PreparedModel p = PrepareModel(o);
  o.params = {{"M", 2}};
  EXPECT_THROW(RunPrepared(p, p.compiled(), o), Error);
  PreparedModel q = PrepareModel(o);  // prepared with M = 2: JA follows
  const Solution heavy = RunPrepared(q, q.compiled(), o).solution;
  o.params.clear();
  const Solution light = RunPrepared(p, p.compiled(), o).solution;
  EXPECT_NE(heavy.rows.back(), light.rows.back());
}

TEST(RunApi, ThreadsSharingTheCompiledModelGiveTheSameRowsAsOneAfterAnother) {
  const RunOptions o = B1();
  PreparedModel p = PrepareModel(o);
  const std::vector<double> damping = {0.5, 2, 10, 40};
  std::vector<std::vector<std::vector<double>>> serial, parallel(damping.size());
  for (double b : damping) {
    RunOptions r = o;
    r.params = {{"B", b}};
    serial.push_back(RunPrepared(p, p.compiled(), r).solution.rows);
  }
  std::vector<std::thread> threads;
  for (size_t i = 0; i < damping.size(); ++i)
    threads.emplace_back([&, i] {
      RunOptions r = o;
      r.params = {{"B", damping[i]}};
      parallel[i] = RunPrepared(p, p.compiled(), r).solution.rows;
    });
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < damping.size(); ++i) EXPECT_EQ(serial[i], parallel[i]) << "B = " << damping[i];
}

TEST(RunApi, AMechanismsParametersNeedANewPreparation) {
  RunOptions o = B1(0.1);
  o.file = SourcePath("examples/B4_spatial_arm.yaml");
  PreparedModel p = PrepareModel(o);
  ASSERT_FALSE(p.parameter_names().empty());
  for (const auto& name : p.parameter_names()) EXPECT_FALSE(p.parameter_settable(name)) << name;
  // A new value for one of them is refused, not silently half-applied.
  o.params = {{p.parameter_names()[0], p.parameter_values()[0] * 1.5 + 1}};
  EXPECT_THROW(RunPrepared(p, p.compiled(), o), Error);
}

TEST(RunApi, ReportsAreTheCommandsText) {
  std::ostringstream out;
  EXPECT_EQ(CheckReport(SourcePath("examples/rlc.yaml"), out), 0);
  EXPECT_NE(out.str().find("ok\n"), std::string::npos);
  std::ostringstream eqs;
  EXPECT_EQ(EquationsText(SourcePath("examples/B1_pendulum.yaml"), false, Formulation::kState, false,
                          ConstraintMethod::kAuto, eqs), 0);
  EXPECT_NE(eqs.str().find("d/dt"), std::string::npos) << eqs.str();
}

TEST(RunApi, BadOverridesAreErrors) {
  EXPECT_THROW(ParseParameterOverrides({"B"}), Error);
  EXPECT_THROW(ParseParameterOverrides({"B=1x"}), Error);
  EXPECT_THROW(ParseParameterOverrides({"B=inf"}), Error);
  RunOptions o = B1();
  o.params = {{"B", std::nan("")}};
  EXPECT_THROW(PrepareModel(o), Error);
  o.params = {{"no_such_parameter", 1}};
  EXPECT_THROW(
      {
        PreparedModel p = PrepareModel(o);
        RunPrepared(p, p.compiled(), o);
      },
      Error);
}

}  // namespace
}  // namespace paynter
