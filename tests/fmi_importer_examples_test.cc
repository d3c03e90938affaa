// tests/fmi_importer_examples_test.cc — the examples exported as FMUs and run
// through the standard's calling sequences against `paynter simulate`: B1, B3,
// B4, events (the bouncing ball, a sampled controller, switched elements,
// events made true by an instant), a closed chain with compliant joints, the
// DC motor driven by tests/fmi2_master.c, tunable and fixed parameters.
#include "fmi_importer.h"

namespace fmi_import {

namespace {

// B1. Co-simulation against simulate: both run Dormand-Prince 5(4) with
// ode45's control at rtol 1e-10, atol 1e-12, each within ~1e-9 of the exact
// solution (the damping contracts errors), so 1e-8 relative bounds their
// difference; they differ only in where the steps fall (the FMU stops at
// every communication point). Model exchange is the importer's RK4 at h = 1e-3:
// against simulate's dopri5 its own truncation error counts (about
// (h/tau)^4 with the fastest time constant tau = JA/B = 0.033 s: 1e-6), and
// against simulate's rk4 at the same step only rounding differs.
TEST(FmiImporter, B1PendulumMatchesSimulate) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/B1_pendulum.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  EXPECT_STREQ(u.fmu.GetVersion(), "2.0");
  EXPECT_STREQ(u.fmu.GetTypesPlatform(), "default");
  const Table ref = Simulate("examples/B1_pendulum.yaml", "", 10, 0.1, u.dir);
  ExpectClose("B1 cs", ref, RunCoSimulation(u, 10, 0.1), 1e-8);
  ExpectClose("B1 me", ref, RunModelExchange(u, 10, 0.1, 100), 1e-6);
  const Table rk4 = Simulate("examples/B1_pendulum.yaml", "--method rk4 --step 1e-3", 10, 0.1, u.dir);
  ExpectClose("B1 me vs rk4", rk4, RunModelExchange(u, 10, 0.1, 100), 1e-10);
}

// A parameter set through fmi2SetReal before initialization changes the
// result as --param does. The mass M is tunable too: the derived parameter
// JA = Izz + M (L/2)^2 is a calculated parameter the FMU computes again from
// it, as simulate --param M=2 derives it; JA itself cannot be set.
TEST(FmiImporter, B1DampingSetBeforeInitializationActsAsParam) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/B1_pendulum.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  EXPECT_EQ(u.desc.Start("B"), 10);
  const Table ref10 = Simulate("examples/B1_pendulum.yaml", "", 2, 0.1, u.dir);
  const Table ref30 = Simulate("examples/B1_pendulum.yaml", "--param B=30", 2, 0.1, u.dir);
  const Table cs = RunCoSimulation(u, 2, 0.1, {{"B", 30}});
  ExpectClose("B1 B=30 cs", ref30, cs, 1e-8);
  ExpectClose("B1 B=30 me", ref30, RunModelExchange(u, 2, 0.1, 100, {{"B", 30}}), 1e-6);
  // The change is visible: B = 30 is not B = 10.
  const int g = cs.Column("gamma"), g10 = ref10.Column("gamma");
  EXPECT_GT(std::fabs(cs.rows.back()[g] - ref10.rows.back()[g10]), 1e-2);

  const Variable* ja = u.desc.Find("JA");
  ASSERT_NE(ja, nullptr);
  EXPECT_EQ(ja->causality, "calculatedParameter");
  EXPECT_EQ(ja->variability, "tunable");
  EXPECT_EQ(u.desc.Find("M")->variability, "tunable");
  const Table ref_m = Simulate("examples/B1_pendulum.yaml", "--param M=2", 2, 0.1, u.dir);
  const Table cs_m = RunCoSimulation(u, 2, 0.1, {{"M", 2}});
  ExpectClose("B1 M=2 cs", ref_m, cs_m, 1e-8);
  EXPECT_GT(std::fabs(cs_m.rows.back()[g] - ref10.rows.back()[g10]), 1e-2);

  Component c = u.fmu.Instantiate("p", fmi2CoSimulation, u.desc.guid.c_str(), "", &kCallbacks, 0, 0);
  ASSERT_NE(c, nullptr);
  g_log.clear();
  const unsigned ja_vr = u.desc.vr_of.at("JA"), mass = u.desc.vr_of.at("M");
  const double two = 2;
  EXPECT_EQ(u.fmu.SetReal(c, &ja_vr, 1, &two), kError);
  ASSERT_FALSE(g_log.empty());
  EXPECT_NE(g_log.back().find("calculated parameter"), std::string::npos) << g_log.back();
  // JA follows M at once: Izz + M (L/2)^2 with the export's Izz and L.
  EXPECT_EQ(u.fmu.SetReal(c, &mass, 1, &two), kOK);
  EXPECT_EQ(u.fmu.EnterInitializationMode(c), kOK);
  double ja_value = 0;
  EXPECT_EQ(u.fmu.GetReal(c, &ja_vr, 1, &ja_value), kOK);
  const double L = u.desc.Start("L"), izz = u.desc.Start("Izz");
  EXPECT_NEAR(ja_value, izz + 2 * (L / 2) * (L / 2), 1e-15);
  u.fmu.FreeInstance(c);
}

// The bouncing ball (examples/bouncing_ball.yaml: an event `h < 0` that
// resets p_mass to -e p_mass). Between impacts the motion is a parabola,
// which both integrators follow exactly (Dormand-Prince, Runge-Kutta and the
// Hermite interpolant are exact for polynomials of degree 2), and the impacts
// are located to a few units of rounding of t, so the FMU, by co-simulation
// and by this master's model exchange, agrees with simulate to rounding:
// 1e-9 relative bounds differences that are of order 1e-14. The impacts are
// those of the closed form t_1 = sqrt(2 h0/g), t_(k+1) = t_k + 2 e^k
// sqrt(2 g h0)/g (k = 1, 2, ...): 9 before 3.5 s (they accumulate at 4.064 s).
TEST(FmiImporter, BouncingBallEventsMatchSimulate) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/bouncing_ball.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  EXPECT_EQ(u.desc.num_event_indicators, 1);
  EXPECT_EQ(u.desc.Find("e")->variability, "tunable");  // read by the impact's reset only
  int impacts = 0;
  for (double tk = std::sqrt(2 / 9.81), dt = 0.8 * 2 * std::sqrt(2 * 9.81) / 9.81; tk < 3.5; tk += dt, dt *= 0.8)
    ++impacts;
  EXPECT_EQ(impacts, 9);
  const Table ref = GridRows(Simulate("examples/bouncing_ball.yaml", "", 3.5, 0.01, u.dir), 3.5, 0.01);
  ExpectClose("ball cs", ref, RunCoSimulation(u, 3.5, 0.01), 1e-9);
  EventCounts count;
  ExpectClose("ball me", ref, RunModelExchangeWithEvents(u, 3.5, 0.01, 1e-3, &count), 1e-9);
  // Each impact is an event with a reset; the master also stops where h turns
  // positive again (FMI 2.0 masters see every sign change), which changes nothing.
  EXPECT_EQ(count.resets, impacts);
  EXPECT_EQ(count.state_events, 2 * impacts);
  EXPECT_EQ(count.time_events, 0);
  // The restitution set between runs (a tunable parameter read by the reset only).
  // Before its Zeno point (3 sqrt(2 h0/g) = 1.35 s), where simulate and the FMU stop with an error
  // (BouncingBallStopsAtItsZenoPoint).
  const Table ref_e = GridRows(Simulate("examples/bouncing_ball.yaml", "--param e=0.5", 1.2, 0.01, u.dir), 1.2, 0.01);
  ExpectClose("ball e=0.5 cs", ref_e, RunCoSimulation(u, 1.2, 0.01, {{"e", 0.5}}), 1e-9);
  // The master on the standard's own headers (tests/fmi2_master.c), by co-simulation.
  ExpectClose("ball cs (fmi2_master)", ref, RunMaster(u, "cs", 3.5, 0.01, "--tolerance 1e-10", "ball_master").first,
              1e-9);
  // Without event handling the ball would fall through the floor: the height stays >= 0 up to rounding.
  const Table cs = RunCoSimulation(u, 3.5, 0.01);
  for (const auto& row : cs.rows) EXPECT_GE(row[cs.Column("h")], -1e-12) << "t = " << row[0];
}

// Co-simulation by classical Runge-Kutta (--method rk4): the impacts are
// located on each step's cubic Hermite interpolant, exact for the parabola.
TEST(FmiImporter, BouncingBallEventsRk4CoSimulation) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/bouncing_ball.yaml", "--kind cs --method rk4 --step 1e-2", &u));
  const Table ref = GridRows(Simulate("examples/bouncing_ball.yaml", "", 3.5, 0.01, u.dir), 3.5, 0.01);
  ExpectClose("ball cs rk4", ref, RunCoSimulation(u, 3.5, 0.01), 1e-9);
}

// The ball with e = 0.5: its impacts come at t_k = t1 (3 - 2^(2-k)), t1 =
// sqrt(2 h0/g), and accumulate at 3 t1 = 1.35457 s (a Zeno point). At the 7th
// the intervals have shrunk 5 times in a row by the same ratio 1/2, and the
// FMU stops the run there with fmi2Error, as simulate stops, naming the event
// and the point (t7 + the intervals to come, 2 t1/64, = 3 t1 exactly), rather
// than go on until a bounce lower than the integrator's tolerance is missed
// and the ball falls through the floor. Co-simulation by tests/fmi2_master.c
// and model exchange by this importer, each run to 2 s with the stop time
// given: what they returned before the error is above the floor and reaches
// the communication point before the 7th impact. Without a stop time the rule
// alone decides: the default ball (e = 0.8, accumulating at 4.064 s) stops at
// its 7th impact, t1 (9 - 8 0.8^6) = 3.117 s (its point 9 t1), though the run
// asked for 3.5 s only (with the stop time 3.5 it runs through,
// BouncingBallEventsMatchSimulate).
TEST(FmiImporter, BouncingBallStopsAtItsZenoPoint) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/bouncing_ball.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  const double t1 = std::sqrt(2 / 9.81), t7 = t1 * (3 - 1.0 / 32), t7_default = t1 * (9 - 8 * std::pow(0.8, 6));
  auto g6 = [](double x) {  // as the FMU prints the point
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", x);
    return std::string(buf);
  };
  // The message names the event, the firing and its time, the point and the hint.
  auto expect_message = [](const char* what, const std::string& log, double t_stop, const std::string& point,
                           const char* until) {
    SCOPED_TRACE(what);
    EXPECT_NE(log.find("event 'impact' fires ever sooner: 5 times in a row"), std::string::npos) << log;
    EXPECT_NE(log.find("accumulate at about t = " + point + ", " + until), std::string::npos) << log;
    EXPECT_NE(log.find("(a Zeno point); the run stops at its firing 7, t = "), std::string::npos) << log;
    EXPECT_NE(log.find("Hint: end the run before t = "), std::string::npos) << log;
    const size_t at = log.find("firing 7, t = ");
    ASSERT_NE(at, std::string::npos) << log;
    EXPECT_NEAR(std::stod(log.substr(at + 14)), t_stop, 1e-9) << log;
  };
  // The rows returned before the error: above the floor (up to the
  // integrator's error), up to the last communication point before t_stop.
  auto expect_rows = [](const char* what, const Table& tab, double t_stop, double dt_out) {
    SCOPED_TRACE(what);
    const int h = tab.Column("h");
    ASSERT_GE(h, 0);
    ASSERT_FALSE(tab.rows.empty());
    for (const auto& row : tab.rows) EXPECT_GE(row[h], -1e-6) << "t = " << row[0];
    EXPECT_LE(tab.rows.back()[0], t_stop);
    EXPECT_GT(tab.rows.back()[0], t_stop - dt_out - 1e-9);
  };
  const unsigned e = u.desc.vr_of.at("e"), h = u.desc.vr_of.at("h");

  // Co-simulation by the master on the standard's headers.
  const fs::path csv = u.dir / "zeno_cs.csv";
  const Result r = Shell(std::string(FMI2_MASTER) + " " + u.so + " '" + u.desc.guid + "' cs 2 0.01 --nx 2 --out " +
                         std::to_string(h) + " --csv " + csv.string() + " --tolerance 1e-10 --param " +
                         std::to_string(e) + "=0.5");
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("fmi2DoStep returned status 3"), std::string::npos) << r.output;
  expect_message("cs", r.output, t7, g6(3 * t1), "before the stop time 2");
  Table cs;
  cs.columns = {"t", "h"};
  std::ifstream in(csv);
  for (std::string line; std::getline(in, line);) {
    const size_t comma = line.find(',');
    cs.rows.push_back({std::stod(line.substr(0, comma)), std::stod(line.substr(comma + 1))});
  }
  expect_rows("cs", cs, t7, 0.01);

  // Model exchange by this importer: fmi2NewDiscreteStates at the 7th impact fails; 6 impacts reset the ball.
  EventCounts count;
  std::string failure;
  const Table me = RunModelExchangeWithEvents(u, 2, 0.01, 1e-3, &count, {{"e", 0.5}}, true, &failure);
  expect_message("me", failure, t7, g6(3 * t1), "before the stop time 2");
  expect_rows("me", me, t7, 0.01);
  EXPECT_EQ(count.resets, 6);

  // No stop time: the default ball stops at its 7th impact, in model exchange ...
  failure.clear();
  count = EventCounts{};
  const Table me_default = RunModelExchangeWithEvents(u, 3.5, 0.01, 1e-3, &count, {}, false, &failure);
  expect_message("me, no stop time", failure, t7_default, g6(9 * t1), "and no stop time was given");
  expect_rows("me, no stop time", me_default, t7_default, 0.01);
  // ... and in co-simulation, where fmi2DoStep leaves the FMU at the step's start.
  Fmu& f = u.fmu;
  Component c = f.Instantiate("cs", fmi2CoSimulation, u.desc.guid.c_str(), "", &kCallbacks, 0, 0);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(f.SetupExperiment(c, 1, 1e-10, 0.0, 0, 0.0), kOK);
  EXPECT_EQ(f.EnterInitializationMode(c), kOK);
  EXPECT_EQ(f.ExitInitializationMode(c), kOK);
  g_log.clear();
  Status st = kOK;
  int k = 0;
  for (; k < 350; ++k)
    if ((st = f.DoStep(c, k * 0.01, 0.01, 1)) != kOK) break;
  const double t = k * 0.01;  // the failed step's start
  EXPECT_EQ(st, kError);
  std::string log;
  for (const std::string& line : g_log) log += line + "\n";
  expect_message("cs, no stop time", log, t7_default, g6(9 * t1), "and no stop time was given");
  double last = 0, height = 0;
  EXPECT_EQ(f.GetRealStatus(c, fmi2LastSuccessfulTime, &last), kOK);
  EXPECT_NEAR(last, t, 1e-12);
  EXPECT_LE(last, t7_default);
  EXPECT_GT(last, t7_default - 0.01);
  EXPECT_EQ(f.GetReal(c, &h, 1, &height), kOK);
  EXPECT_GE(height, 0);
  // After fmi2Reset, the e = 0.5 ball up to 1.3 s (5 impacts, before its point) runs whole.
  EXPECT_EQ(f.Reset(c), kOK);
  EXPECT_EQ(f.SetupExperiment(c, 1, 1e-10, 0.0, 1, 1.3), kOK);
  const double half = 0.5;
  EXPECT_EQ(f.SetReal(c, &e, 1, &half), kOK);
  EXPECT_EQ(f.EnterInitializationMode(c), kOK);
  EXPECT_EQ(f.ExitInitializationMode(c), kOK);
  for (k = 0; k < 130; ++k) ASSERT_EQ(f.DoStep(c, k * 0.01, 0.01, 1), kOK) << "t = " << k * 0.01;
  EXPECT_EQ(f.Terminate(c), kOK);
  f.FreeInstance(c);
}

// An event whose intervals shrink by no single ratio: a tick at t >= tk that
// moves tk on by d, d shrinking by 0.5 and 0.9 in turn. The same-ratio rule
// never holds (consecutive ratios differ by 80 %); the other does at the 20th
// interval in a row at most 0.95 of the one before: firing 22, at 0.1 + the
// first 21 intervals (0.05, 0.045, 0.0225, 0.02025, ...), where simulate
// stops too. The point predicted from the last interval and its ratio 1/2 is
// that time plus the last interval. Model exchange (the tick a time event the
// FMU announces) and co-simulation, with the stop time 1.
TEST(FmiImporter, TicksComingEverSoonerStopTheRun) {
  const fs::path model = TestDir("TicksComingEverSoonerModel") / "ticks.yaml";
  std::ofstream(model) << "name: ticks\nparameters: {m: 1}\nelements:\n"
                          "  - {name: mass, kind: I, inertance: m}\n  - {name: push, kind: Se, effort: 0}\n"
                          "bonds: [[push, mass]]\ndisplacements:\n  - {name: tk, rate: 0, initial: 0.1}\n"
                          "  - {name: d, rate: 0, initial: 0.1}\n  - {name: s, rate: 0, initial: 0}\n"
                          "events:\n  - name: tick\n    when: t >= tk\n    reset:\n      tk: tk + d*(0.5 + 0.4*s)\n"
                          "      d: d*(0.5 + 0.4*s)\n      s: 1 - s\noutputs:\n  tk: tk\n";
  double t22 = 0.1, d = 0.1, last = 0;
  for (int k = 0; k < 21; ++k) last = d *= k % 2 ? 0.9 : 0.5, t22 += d;
  char point[32];
  std::snprintf(point, sizeof point, "%.6g", t22 + last);
  auto expect_message = [&](const char* what, const std::string& log) {
    SCOPED_TRACE(what);
    EXPECT_NE(log.find("event 'tick' fires ever sooner: 20 times in a row, each interval at most 0.95 of the one before"),
              std::string::npos)
        << log;
    EXPECT_NE(log.find(std::string("accumulate at about t = ") + point + ", before the stop time 1 (a Zeno point)"),
              std::string::npos)
        << log;
    const size_t at = log.find("its firing 22, t = ");
    ASSERT_NE(at, std::string::npos) << log;
    EXPECT_NEAR(std::stod(log.substr(at + 19)), t22, 1e-12) << log;
  };
  const Result sim = Shell(std::string(PAYNTER_EXE) + " simulate " + model.string() + " --t-end 1 -o " +
                           (model.parent_path() / "ticks.csv").string());
  EXPECT_NE(sim.status, 0);
  EXPECT_NE(sim.output.find("firing 22 of 'tick'"), std::string::npos) << sim.output;

  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack(model.string(), "--rtol 1e-10 --atol 1e-12", &u));
  EventCounts count;
  std::string failure;
  const Table me = RunModelExchangeWithEvents(u, 1, 0.01, 1e-3, &count, {}, true, &failure);
  expect_message("me", failure);
  EXPECT_EQ(count.time_events, 22);  // announced and reached; the 22nd refused
  ASSERT_FALSE(me.rows.empty());
  EXPECT_GT(me.rows.back()[0], t22 - 0.01);

  Fmu& f = u.fmu;
  Component c = f.Instantiate("cs", fmi2CoSimulation, u.desc.guid.c_str(), "", &kCallbacks, 0, 0);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(f.SetupExperiment(c, 1, 1e-10, 0.0, 1, 1.0), kOK);
  EXPECT_EQ(f.EnterInitializationMode(c), kOK);
  EXPECT_EQ(f.ExitInitializationMode(c), kOK);
  g_log.clear();
  Status st = kOK;
  int k = 0;
  for (; k < 100; ++k)
    if ((st = f.DoStep(c, k * 0.01, 0.01, 1)) != kOK) break;
  EXPECT_EQ(st, kError);
  EXPECT_EQ(k, static_cast<int>(t22 / 0.01));  // the step the 22nd tick falls in
  std::string log;
  for (const std::string& line : g_log) log += line + "\n";
  expect_message("cs", log);
  f.FreeInstance(c);
}

// The 1 kHz sampled PI controller of examples/dc_motor_sampled_control.yaml
// (a discrete_pid block: an event `t >= tk` at every sample, resetting the
// held voltage, the integral and tk; the setpoint's step_at(0.1) is a
// condition on t; the output limits are conditions too). Its indicators
// t - tk and t - 0.1 are time events: model exchange announces them in
// nextEventTime. Outputs every 1 ms fall on the samples, where the row is
// the one before the sample in simulate's CSV, in co-simulation and in model
// exchange alike. Co-simulation at rtol 1e-10 against simulate at rtol 1e-10
// (both Dormand-Prince with ode45's control, steps no longer than 1 ms): at
// most 4e-11 relative to 1 + the output's largest value (motor.i, 7.6e-10 A
// of 18.5 A); model exchange is the importer's Runge-Kutta at h = 1e-5 s (the
// electrical time constant L/R is 1.7 ms), 3e-11 (5.7e-10 A). Both within
// 1e-9: the samples fall at the same instants (to rounding; the sample and
// the setpoint's step at 0.1 s are one event in both) and hold the same values.
TEST(FmiImporter, SampledControllerTimeEventsMatchSimulate) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/dc_motor_sampled_control.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  EXPECT_GE(u.desc.num_event_indicators, 2);
  const double t_end = 0.3, dt = 1e-3;
  const Table ref = GridRows(Simulate("examples/dc_motor_sampled_control.yaml", "", t_end, dt, u.dir), t_end, dt);
  ExpectClose("sampled cs", ref, RunCoSimulation(u, t_end, dt), 1e-9);
  EventCounts count;
  ExpectClose("sampled me", ref, RunModelExchangeWithEvents(u, t_end, dt, 1e-5, &count), 1e-9);
  std::printf("sampled me: %d time events, %d state events, %d with resets\n", count.time_events, count.state_events,
              count.resets);
  // One reset per sample: at 1, 2, ... 300 ms (the last one at t_end or just after it).
  EXPECT_GE(count.resets, 299);
  EXPECT_LE(count.resets, 300);
  EXPECT_GE(count.time_events, 299);  // the samples come as time events, not located crossings
  // The controller acts: the speed follows the setpoint's step at 0.1 s.
  const int speed = ref.Column("speed");
  EXPECT_GT(ref.rows.back()[speed], 30);
}

// Switched elements (docs/events.md): Coulomb friction that sticks and slips
// (examples/belt_friction.yaml) and an ideal diode (half_wave_rectifier.yaml).
// Their switches are state events with two indicators per element; the FMU
// changes their modes as simulate does. Largest differences to simulate
// (rtol 1e-10): belt 7.9e-12 (CS) and 1.4e-10 (ME, Runge-Kutta at dt/10),
// rectifier 1.5e-9 and 1.4e-9 (v_out, of 8.9 V); within 1e-8 relative.
TEST(FmiImporter, SwitchedElementsMatchSimulate) {
  for (const auto& [model, t_end, dt] : {std::tuple{"examples/belt_friction.yaml", 5.0, 0.01},
                                         std::tuple{"examples/half_wave_rectifier.yaml", 0.1, 1e-4}}) {
    Unpacked u;
    ASSERT_NO_FATAL_FAILURE(ExportAndUnpack(model, "--rtol 1e-10 --atol 1e-12", &u));
    EXPECT_GE(u.desc.num_event_indicators, 2) << model;
    const Table ref = GridRows(Simulate(model, "", t_end, dt, u.dir), t_end, dt);
    ExpectClose(model, ref, RunCoSimulation(u, t_end, dt), 1e-8);
    EventCounts count;
    ExpectClose(model, ref, RunModelExchangeWithEvents(u, t_end, dt, dt / 10, &count), 1e-8);
    std::printf("%s me: %d state events\n", model, count.state_events);
    EXPECT_GE(count.state_events, 4) << model;
  }
}
// Events that the instant itself makes true (docs/events.md): `kick` compares
// step_at(0.3), which jumps, and `echo` turns true when kick's reset moves
// p_a; a square wave's rising edges count on p_c. The FMU fires them as
// simulate does: by co-simulation and by this master's model exchange, the
// same rows as simulate's to 1e-9 (the motion is a straight line between
// the events), and the counts of the closed form.
TEST(FmiImporter, EventsOnJumpingSignalsAndCascadesMatchSimulate) {
  const fs::path dir = TestDir("EventsOnJumpingSignals_model");
  const fs::path model = dir / "kick.yaml";
  std::ofstream(model) << R"yaml(elements:
  - {name: ja, kind: "1"}
  - {name: a, kind: I, inertance: 1, initial: 0}
  - {name: push, kind: Se, effort: 1}
  - {name: jb, kind: "1"}
  - {name: b, kind: I, inertance: 1, initial: 0}
  - {name: zb, kind: Se, effort: 0}
  - {name: jc, kind: "1"}
  - {name: c, kind: I, inertance: 1, initial: 0}
  - {name: zc, kind: Se, effort: 0}
bonds: [[push, ja], [ja, a], [zb, jb], [jb, b], [zc, jc], [jc, c]]
events:
  - {name: kick, when: step_at(0.3) > 0.5, reset: {p_a: 10}}
  - {name: echo, when: p_a > 5, reset: {p_b: p_a + 1}}
  - {name: edge, when: "square(0, 0.2) > 0", reset: {p_c: p_c + 1}}
outputs: {pa: p_a, pb: p_b, count: p_c}
)yaml";
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack(model.string(), "--rtol 1e-10 --atol 1e-12", &u));
  const Table ref = GridRows(Simulate(model.string(), "", 0.9, 0.01, u.dir), 0.9, 0.01);
  const Table& last = ref;
  EXPECT_NEAR(last.rows.back()[last.Column("pa")], 10.6, 1e-9);  // 10 at 0.3, then + (t - 0.3)
  EXPECT_EQ(last.rows.back()[last.Column("pb")], 11.0);          // from p_a after the kick
  EXPECT_EQ(last.rows.back()[last.Column("count")], 4.0);        // edges at 0.2, 0.4, 0.6, 0.8
  ExpectClose("kick cs", ref, RunCoSimulation(u, 0.9, 0.01), 1e-9);
  EventCounts count;
  ExpectClose("kick me", ref, RunModelExchangeWithEvents(u, 0.9, 0.01, 1e-3, &count), 1e-9);
}

// B3 (Hamilton's form, a linear implicit block in the state derivatives).
// Co-simulation as for B1: simulate's own error at rtol 1e-10 (against rtol
// 1e-12) is 1.2e-5 on theta1dot (scale 47), 1e-7 on the others, so 1e-6
// relative bounds the difference of two such runs. The crank's rate is
// so sensitive that a fixed step of 1e-4 is still 28 rad/s off the adaptive
// runs (simulate --method rk4 shows the same), so model exchange is compared
// with simulate's rk4 at the importer's step: the same method on the same
// equations, apart from rounding.
TEST(FmiImporter, B3QuickReturnMatchesSimulate) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/B3_quick_return.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  const Table ref = Simulate("examples/B3_quick_return.yaml", "", 10, 0.1, u.dir);
  ExpectClose("B3 cs", ref, RunCoSimulation(u, 10, 0.1), 1e-6);
  const Table rk4 = Simulate("examples/B3_quick_return.yaml", "--method rk4 --step 1e-4", 10, 0.1, u.dir);
  ExpectClose("B3 me", rk4, RunModelExchange(u, 10, 0.1, 1000), 1e-8);
}

// B4 (a mechanism under multibody:, exported in joint coordinates: the mass
// matrix solved as an implicit block at every evaluation), against simulate
// in the same form.
TEST(FmiImporter, B4SpatialArmMatchesSimulate) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/B4_spatial_arm.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  const Table ref = Simulate("examples/B4_spatial_arm.yaml", "--form lagrange2", 5, 0.05, u.dir);
  ExpectClose("B4 cs", ref, RunCoSimulation(u, 5, 0.05), 1e-7);
  ExpectClose("B4 me", ref, RunModelExchange(u, 5, 0.05, 200), 1e-6);
  const Table rk4 =
      Simulate("examples/B4_spatial_arm.yaml", "--form lagrange2 --method rk4 --step 2.5e-4", 5, 0.05, u.dir);
  ExpectClose("B4 me vs rk4", rk4, RunModelExchange(u, 5, 0.05, 200), 1e-9);
}

// A closed chain runs with compliant joints (parasitic): the FMU's
// co-simulation against simulate with the same method, integrator and tolerances.
TEST(FmiImporter, ClosedChainWithParasiticJoints) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(
      ExportAndUnpack("examples/fourbar.yaml", "--form state --constraints parasitic --rtol 1e-8 --atol 1e-10", &u));
  const fs::path csv = u.dir / "simulate.csv";
  const Result r = Shell(std::string(PAYNTER_EXE) + " simulate " + Source("examples/fourbar.yaml") +
                         " --constraints parasitic --method dopri5 --rtol 1e-8 --atol 1e-10 --t-end 0.5 --dt-out 0.05 "
                         "-o " +
                         csv.string());
  ASSERT_EQ(r.status, 0) << r.output;
  ExpectClose("fourbar parasitic cs", paynter::testing::ReadCsvTable(csv), RunCoSimulation(u, 0.5, 0.05), 1e-5);
}

// The description of the DC motor with units: the supply is an input (its
// start value the law's 12 V), every variable with a dimension has its SI
// unit with the exponents of its base units, the units written in the model
// are display units with their factors, the parameters are tunable and the
// voltage V, which only the supply's law read, is fixed and says so.
TEST(FmiImporter, DcMotorInputsUnitsAndParameters) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/dc_motor_units.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  const Variable* supply = u.desc.Find("supply");
  ASSERT_NE(supply, nullptr);
  EXPECT_EQ(supply->causality, "input");
  EXPECT_EQ(supply->variability, "continuous");
  EXPECT_EQ(supply->start, 12);
  EXPECT_EQ(supply->unit, "V");
  const std::map<std::string, int> volt = {{"kg", 1}, {"m", 2}, {"s", -3}, {"A", -1}};
  EXPECT_EQ(u.desc.units.at("V").base, volt);
  const Variable* speed = u.desc.Find("speed");
  ASSERT_NE(speed, nullptr);
  EXPECT_EQ(speed->unit, "1/s");
  EXPECT_EQ(speed->display_unit, "rpm");
  EXPECT_EQ(u.desc.units.at("1/s").base, (std::map<std::string, int>{{"s", -1}}));
  EXPECT_NEAR(u.desc.DisplayFactor("speed"), 60 / (2 * M_PI), 1e-14);
  EXPECT_EQ(u.desc.Find("current")->unit, "A");
  EXPECT_NE(u.desc.Find("current")->description.find("f_armature"), std::string::npos);
  const Variable* la = u.desc.Find("La");
  ASSERT_NE(la, nullptr);
  EXPECT_EQ(la->causality, "parameter");
  EXPECT_EQ(la->variability, "tunable");
  EXPECT_EQ(la->unit, "H");
  EXPECT_EQ(la->display_unit, "mH");
  EXPECT_NEAR(la->start, 5e-3, 1e-18);
  EXPECT_NEAR(u.desc.DisplayFactor("La"), 1000, 1e-12);
  for (const char* p : {"Ra", "K", "J", "b"}) {
    ASSERT_NE(u.desc.Find(p), nullptr) << p;
    EXPECT_EQ(u.desc.Find(p)->variability, "tunable") << p;
  }
  EXPECT_EQ(u.desc.Find("Ra")->unit, "Ohm");
  const Variable* v = u.desc.Find("V");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->causality, "local");
  EXPECT_NE(v->description.find("not read"), std::string::npos) << v->description;
  // States and their derivatives: the inductance's flux linkage in V s (Wb), the rotor's momentum in N m s.
  EXPECT_EQ(u.desc.Find("p_armature_L")->unit, "Wb");  // V s
  EXPECT_EQ(u.desc.Find("der(p_armature_L)")->unit, "V");
  EXPECT_EQ(u.desc.Find("p_rotor_J")->unit, "N m s");
}

constexpr double kStepTime = 3.0 / 256, kDtOut = 1.0 / 256, kEnd = 32.0 / 256, kH = 1.0 / 131072;

// The master drives the supply with a step (0 to 12 V at t = 3/256 s) and
// with a sine (12 V at 20 Hz): model exchange with its own Runge-Kutta at
// h = 2^-17 s, setting the input at every stage; co-simulation, setting it at
// every communication point (1/256 s). The reference is simulate of the
// model with the supply's law written as that signal (for co-simulation's
// sine: the held values, as a table with a jump at each point). All agree to
// 1e-8 of each output's largest value. Between two runs the master sets the
// armature resistance (after fmi2Reset), as simulate --param does.
TEST(FmiImporter, DcMotorDrivenByAMaster) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/dc_motor_units.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  const std::string supply = Vr(u, "supply"), ra = Vr(u, "Ra");
  const std::string law = "effort: V, input: true";
  const fs::path step =
      ModelVariant("dc_motor_units", law, "effort: \"12*step_at(" + Num(kStepTime) + ")\"", u.dir, "step");
  const fs::path sine = ModelVariant("dc_motor_units", law, "effort: \"12 [V]*sin(2*pi*20 [1/s]*t)\"", u.dir, "sine");
  std::string held = "table([";
  std::string values;
  for (int k = 0; k < 32; ++k) {
    const double t0 = k * kDtOut, v = 12 * std::sin(2 * M_PI * 20 * t0);
    held += (k ? ", " : "") + Num(t0) + ", " + Num((k + 1) * kDtOut);
    values += (k ? ", " : "") + Num(v) + ", " + Num(v);
  }
  held += "], [" + values + "])";
  const fs::path zoh = ModelVariant("dc_motor_units", law, "effort: \"" + held + "\"", u.dir, "zoh");

  const std::string step_input = " --input " + supply + "=step:" + Num(kStepTime) + ":0:12";
  const std::string sine_input = " --input " + supply + "=sine:0:12:20";
  const std::string me = " --h " + Num(kH);
  const Table ref_step = SimulateFile(step, "", kEnd, kDtOut, u.dir, "ref_step");
  const Table ref_step_ra = SimulateFile(step, "--param Ra=2.4", kEnd, kDtOut, u.dir, "ref_step_ra");
  const Table ref_sine = SimulateFile(sine, "", kEnd, kDtOut, u.dir, "ref_sine");
  const Table ref_zoh = SimulateFile(zoh, "", kEnd, kDtOut, u.dir, "ref_zoh");

  const MasterRun me_step = RunMaster(u, "me", kEnd, kDtOut, me + step_input + " --then " + ra + "=2.4", "me_step");
  ExpectAgree("dc step me", ref_step, me_step.first, 1e-8);
  ExpectAgree("dc step me Ra=2.4", ref_step_ra, me_step.second, 1e-8);
  const MasterRun cs_step = RunMaster(u, "cs", kEnd, kDtOut, step_input + " --then " + ra + "=2.4", "cs_step");
  ExpectAgree("dc step cs", ref_step, cs_step.first, 1e-8);
  ExpectAgree("dc step cs Ra=2.4", ref_step_ra, cs_step.second, 1e-8);
  // The change of Ra shows: the final current differs by more than 1%.
  const int i_col = ref_step.Column("current");
  ASSERT_GE(i_col, 0);
  EXPECT_GT(std::fabs(ref_step_ra.rows.back()[i_col] - ref_step.rows.back()[i_col]),
            0.01 * std::fabs(ref_step.rows.back()[i_col]));

  ExpectAgree("dc sine me", ref_sine, RunMaster(u, "me", kEnd, kDtOut, me + sine_input, "me_sine").first, 1e-8);
  ExpectAgree("dc sine cs", ref_zoh, RunMaster(u, "cs", kEnd, kDtOut, sine_input, "cs_sine").first, 1e-8);
}

// B4: the mechanism's parameters that its equations keep as symbols are
// tunable (the moment M, the masses, inertias, the spring); c, the slider's
// initial offset, only sets an initial state and stays fixed. A master sets
// the spring K between two runs, and the result is simulate --param K=800's.
TEST(FmiImporter, B4TunableParameterMatchesSimulate) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/B4_spatial_arm.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  for (const char* p : {"M", "m1", "m2", "I0", "K", "b"}) {
    ASSERT_NE(u.desc.Find(p), nullptr) << p;
    EXPECT_EQ(u.desc.Find(p)->variability, "tunable") << p;
  }
  ASSERT_NE(u.desc.Find("c"), nullptr);
  EXPECT_EQ(u.desc.Find("c")->causality, "local");
  const fs::path model = Source("examples/B4_spatial_arm.yaml");
  const Table ref = SimulateFile(model, "--form lagrange2", 1, 0.05, u.dir, "ref");
  const Table ref_k = SimulateFile(model, "--form lagrange2 --param K=800", 1, 0.05, u.dir, "ref_k");
  const MasterRun cs = RunMaster(u, "cs", 1, 0.05, "--tolerance 1e-10 --then " + Vr(u, "K") + "=800", "cs");
  ExpectAgree("B4 cs", ref, cs.first, 1e-8);
  ExpectAgree("B4 cs K=800", ref_k, cs.second, 1e-8);
  const int s = ref.Column("s");
  ASSERT_GE(s, 0);
  EXPECT_GT(std::fabs(ref_k.rows.back()[s] - ref.rows.back()[s]), 1e-3);
}

// A parameter the build turns into numbers stays fixed, and says why: the
// body's inertias of rigid_body_vector give its initial momenta
// (initial: [0.1*Ix, ...]); the lever's arm rx is read by the equations alone.
TEST(FmiImporter, ParametersThatSetInitialValuesStayFixed) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/rigid_body_vector.yaml", "", &u));
  for (const char* p : {"Ix", "Iy", "Iz"}) {
    const Variable* v = u.desc.Find(p);
    ASSERT_NE(v, nullptr) << p;
    EXPECT_EQ(v->causality, "local") << p;
    EXPECT_EQ(v->variability, "constant") << p;
    EXPECT_NE(v->description.find("initial values"), std::string::npos) << v->description;
  }
  ASSERT_NE(u.desc.Find("rx"), nullptr);
  EXPECT_EQ(u.desc.Find("rx")->variability, "tunable");
  Component c = u.fmu.Instantiate("p", fmi2CoSimulation, u.desc.guid.c_str(), "", &kCallbacks, 0, 0);
  ASSERT_NE(c, nullptr);
  g_log.clear();
  const unsigned ix = u.desc.vr_of.at("Ix");
  const double two = 2;
  EXPECT_EQ(u.fmu.SetReal(c, &ix, 1, &two), kError);
  ASSERT_FALSE(g_log.empty());
  EXPECT_NE(g_log.back().find("constant"), std::string::npos) << g_log.back();
  u.fmu.FreeInstance(c);
}

}  // namespace

}  // namespace fmi_import
