// tests/fmi_importer_errors_test.cc — what an FMU and `paynter fmu` refuse:
// calls out of the standard's sequence, the command's errors, and names from
// the model that must reach the description escaped and nothing else.
#include "fmi_importer.h"

namespace fmi_import {

namespace {

// Calls out of the standard's sequence return fmi2Error with a logged message;
// nothing crashes.
TEST(FmiImporter, BadCallSequencesAreErrors) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/B1_pendulum.yaml", "", &u));
  Fmu& f = u.fmu;
  EXPECT_EQ(f.Instantiate("x", fmi2CoSimulation, "{not-the-guid}", "", &kCallbacks, 0, 0), nullptr);
  EXPECT_EQ(f.Instantiate("x", fmi2CoSimulation, u.desc.guid.c_str(), "", nullptr, 0, 0), nullptr);
  EXPECT_EQ(f.Instantiate("x", static_cast<fmi2Type>(7), u.desc.guid.c_str(), "", &kCallbacks, 0, 0), nullptr);
  auto expect_error = [&](Status s, const std::string& needle) {
    EXPECT_EQ(s, kError);
    ASSERT_FALSE(g_log.empty());
    EXPECT_NE(g_log.back().find(needle), std::string::npos) << g_log.back();
    g_log.clear();
  };
  g_log.clear();
  Component cs = f.Instantiate("cs", fmi2CoSimulation, u.desc.guid.c_str(), "", &kCallbacks, 0, 0);
  ASSERT_NE(cs, nullptr);
  expect_error(f.DoStep(cs, 0, 0.1, 1), "fmi2DoStep may not be called in instantiated");
  expect_error(f.ExitInitializationMode(cs), "fmi2ExitInitializationMode may not be called");
  double x[2];
  expect_error(f.GetDerivatives(cs, x, 2), "fmi2GetDerivatives");
  const unsigned unknown = 99999;
  double v = 1;
  expect_error(f.SetReal(cs, &unknown, 1, &v), "unknown");
  expect_error(f.GetFMUstate(cs, nullptr), "not supported");
  expect_error(f.GetDirectionalDerivative(cs, nullptr, 0, nullptr, 0, nullptr, nullptr), "not supported");
  int iv = 0;
  expect_error(f.GetInteger(cs, &unknown, 1, &iv), "no Integer variables");
  EXPECT_EQ(f.SetupExperiment(cs, 0, 0, 0, 0, 0), kOK);
  EXPECT_EQ(f.EnterInitializationMode(cs), kOK);
  expect_error(f.EnterInitializationMode(cs), "may not be called in initialization mode");
  EXPECT_EQ(f.ExitInitializationMode(cs), kOK);
  expect_error(f.DoStep(cs, 0.5, 0.1, 1), "the step starts at");
  expect_error(f.DoStep(cs, 0, -1, 1), "step size");
  expect_error(f.CancelStep(cs), "no step is pending");
  const unsigned time_vr = 0;
  expect_error(f.SetReal(cs, &time_vr, 1, &v), "cannot be set");
  EXPECT_EQ(f.DoStep(cs, 0, 0.1, 1), kOK);
  EXPECT_EQ(f.Terminate(cs), kOK);
  expect_error(f.DoStep(cs, 0.1, 0.1, 1), "may not be called in terminated");
  EXPECT_EQ(f.Reset(cs), kOK);  // back to instantiated: a new run may start
  EXPECT_EQ(f.EnterInitializationMode(cs), kOK);
  f.FreeInstance(cs);

  Component me = f.Instantiate("me", fmi2ModelExchange, u.desc.guid.c_str(), "", &kCallbacks, 0, 0);
  ASSERT_NE(me, nullptr);
  expect_error(f.SetTime(me, 1), "fmi2SetTime may not be called in instantiated");
  EXPECT_EQ(f.EnterInitializationMode(me), kOK);
  EXPECT_EQ(f.ExitInitializationMode(me), kOK);
  const double states[2] = {0, 0};
  expect_error(f.SetContinuousStates(me, states, 2), "may not be called in event mode");
  EXPECT_EQ(f.EnterContinuousTimeMode(me), kOK);
  expect_error(f.SetContinuousStates(me, states, 3), "expected 2 states");
  expect_error(f.DoStep(me, 0, 0.1, 1), "co-simulation function");
  expect_error(f.GetEventIndicators(me, x, 1), "has 0 event indicators, asked for 1");
  const unsigned state_vr = u.desc.vr_of.at("p_bar");
  expect_error(f.SetReal(me, &state_vr, 1, &v), "may be set only before initialization ends");
  const unsigned b_vr = u.desc.vr_of.at("B");
  expect_error(f.SetReal(me, &b_vr, 1, &v), "may not be set in continuous-time mode");
  EXPECT_EQ(f.EnterEventMode(me), kOK);
  const double nan = NAN;
  expect_error(f.SetReal(me, &b_vr, 1, &nan), "not finite");
  EXPECT_EQ(f.SetReal(me, &b_vr, 1, &v), kOK);  // a tunable parameter, in event mode
  EXPECT_EQ(f.Terminate(me), kOK);
  f.FreeInstance(me);
  f.FreeInstance(nullptr);  // allowed, does nothing
}

// The command's errors follow the project's diagnostics, and no file appears.
TEST(FmiImporter, CommandErrors) {
  const fs::path dir = TestDir("errors");
  const fs::path out = dir / "x.fmu";
  const std::string exe = PAYNTER_EXE;
  Result r = Shell(exe + " fmu " + (dir / "missing.yaml").string() + " -o " + out.string());
  EXPECT_EQ(r.status >> 8, 1) << r.output;
  EXPECT_NE(r.output.find("cannot open the model file"), std::string::npos) << r.output;
  r = Shell(exe + " fmu " + Source("examples/B4_spatial_arm.yaml") + " --form state -o " + out.string());
  EXPECT_EQ(r.status >> 8, 1) << r.output;
  EXPECT_NE(r.output.find("constraint rows"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--form lagrange2"), std::string::npos) << r.output;
  r = Shell(exe + " fmu " + Source("examples/fourbar.yaml") + " -o " + out.string());
  EXPECT_EQ(r.status >> 8, 1) << r.output;
  EXPECT_NE(r.output.find("--constraints parasitic"), std::string::npos) << r.output;
  r = Shell(exe + " fmu " + Source("examples/B1_pendulum.yaml") + " --constraints zcp -o " + out.string());
  EXPECT_EQ(r.status >> 8, 1) << r.output;
  EXPECT_NE(r.output.find("not available in an FMU"), std::string::npos) << r.output;
  r = Shell(exe + " fmu " + Source("examples/B1_pendulum.yaml") + " --param nosuch=1 -o " + out.string());
  EXPECT_EQ(r.status >> 8, 1) << r.output;
  r = Shell(exe + " fmu " + Source("examples/B1_pendulum.yaml") + " --method bdf -o " + out.string());
  EXPECT_EQ(r.status >> 8, 1) << r.output;
  // An input takes the place of its source's law, which may not vary by itself.
  const fs::path models = TestDir("errors_models");
  std::string yaml = paynter::testing::ReadFileBytes(Source("examples/rlc.yaml"));
  yaml.replace(yaml.find("effort: V,"), std::string("effort: V,").size(), "effort: \"V*sin(t)\",");
  std::ofstream(models / "rlc_sine.yaml") << yaml;
  r = Shell(exe + " fmu " + (models / "rlc_sine.yaml").string() + " -o " + out.string());
  EXPECT_EQ(r.status >> 8, 1) << r.output;
  EXPECT_NE(r.output.find("rlc_sine.yaml:10:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("an input of the FMU takes the place of the source's law"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out));
  // Nothing but the (absent) target was left in the directory: no temporaries.
  EXPECT_TRUE(fs::is_empty(dir));
}

// Names from the model reach the description escaped and nothing else (an
// element's or output's name is an identifier; a model's name may be any
// text): a model named with markup, quotes and shell syntax gives a well-formed description, a
// generated identifier and a working shared object; --kind cs leaves model
// exchange out (and fmi2Instantiate refuses it).
TEST(FmiImporter, HostileNamesAndCoSimulationOnly) {
  const fs::path dir = TestDir("hostile");
  std::string yaml = paynter::testing::ReadFileBytes(Source("examples/B1_pendulum.yaml"));
  const std::string hostile = "name: \"x\\\"<b>&'$(touch pwned);/* */\"";
  yaml.replace(yaml.find("name: B1_pendulum"), std::string("name: B1_pendulum").size(), hostile);
  std::ofstream(dir / "hostile.yaml") << yaml;
  const fs::path fmu = dir / "h.fmu";
  Result r =
      Shell(std::string(PAYNTER_EXE) + " fmu " + (dir / "hostile.yaml").string() + " --kind cs -o " + fmu.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(fs::exists(dir / "pwned"));
  r = Shell("cd " + dir.string() + " && unzip -q h.fmu -d unpacked");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(fs::exists(dir / "pwned"));
  const Description d =
      CheckModelDescription(paynter::testing::ReadFileBytes(dir / "unpacked" / "modelDescription.xml"));
  EXPECT_TRUE(d.identifier_me.empty());
  ASSERT_FALSE(d.identifier_cs.empty());
  for (char c : d.identifier_cs)
    EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '_') << d.identifier_cs;
  EXPECT_EQ(d.model_name, "x\"<b>&'$(touch pwned);/* */");
  for (const char* f : {"model.h", "model.c", "rhs.c", "outputs.c"}) {
    const std::string c = paynter::testing::ReadFileBytes(dir / "unpacked" / "sources" / f);
    EXPECT_EQ(c.find("pwned"), std::string::npos) << f;
    EXPECT_EQ(c.find("xG"), std::string::npos) << f;  // no name of the model's either
  }
  Fmu f;
  ASSERT_NO_FATAL_FAILURE(f.Load((dir / "unpacked" / "binaries" / "linux64" / (d.identifier_cs + ".so")).string()));
  g_log.clear();
  EXPECT_EQ(f.Instantiate("me", fmi2ModelExchange, d.guid.c_str(), "", &kCallbacks, 0, 0), nullptr);
  ASSERT_FALSE(g_log.empty());
  EXPECT_NE(g_log.back().find("not exported for model exchange"), std::string::npos) << g_log.back();
  Component c = f.Instantiate("cs", fmi2CoSimulation, d.guid.c_str(), "", &kCallbacks, 0, 0);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(f.EnterInitializationMode(c), kOK);
  EXPECT_EQ(f.ExitInitializationMode(c), kOK);
  EXPECT_EQ(f.DoStep(c, 0, 0.5, 1), kOK);
  double xg = 0;
  const unsigned vr = d.vr_of.at("xG");
  EXPECT_EQ(f.GetReal(c, &vr, 1, &xg), kOK);
  EXPECT_GT(xg, 0);  // the bar hangs below its pivot, to the right of it after half a second
  EXPECT_LT(xg, 0.5);
  f.FreeInstance(c);
}

}  // namespace

}  // namespace fmi_import
