// tests/fmi_importer_drivers.cc — the calling sequences of an FMI 2.0 master
// (model exchange integrated here, with and without events; co-simulation;
// tests/fmi2_master.c, the master on the standard's headers) and the
// comparison of their outputs with `paynter simulate` (fmi_importer.h).
#include "fmi_importer.h"

namespace fmi_import {

// `paynter simulate` (dopri5 at rtol 1e-10, atol 1e-12 unless `options` say otherwise).
Table Simulate(const std::string& model, const std::string& options, double t_end, double dt_out, const fs::path& dir) {
  const fs::path csv = dir / "simulate.csv";
  const Result r =
      Shell(std::string(PAYNTER_EXE) + " simulate " + Source(model) + " --rtol 1e-10 --atol 1e-12 " + options +
            " --t-end " + std::to_string(t_end) + " --dt-out " + std::to_string(dt_out) + " -o " + csv.string());
  EXPECT_EQ(r.status, 0) << r.output;
  return paynter::testing::ReadCsvTable(csv);
}

std::vector<unsigned> OutputRefs(const Description& d, std::vector<std::string>* names) {
  std::vector<unsigned> vr;
  for (int i : d.outputs) {
    vr.push_back(d.vars[i - 1].vr);
    names->push_back(d.vars[i - 1].name);
  }
  return vr;
}

// Model exchange: the standard's calling sequence, integrated by classical
// Runge-Kutta with `steps_per_output` equal steps per output interval.
Table RunModelExchange(Unpacked& u, double t_end, double dt_out, int steps_per_output,
                       const std::vector<std::pair<std::string, double>>& params) {
  Table t;
  Fmu& f = u.fmu;
  Component c = f.Instantiate("me", fmi2ModelExchange, u.desc.guid.c_str(), "", &kCallbacks, 0, 0);
  EXPECT_NE(c, nullptr);
  if (!c) return t;
  EXPECT_EQ(f.SetupExperiment(c, 0, 0, 0.0, 1, t_end), kOK);
  for (const auto& [name, value] : params) {
    const unsigned vr = u.desc.vr_of.at(name);
    EXPECT_EQ(f.SetReal(c, &vr, 1, &value), kOK) << name;
  }
  EXPECT_EQ(f.EnterInitializationMode(c), kOK);
  EXPECT_EQ(f.ExitInitializationMode(c), kOK);
  EventInfo info{1, 0, 0, 0, 0, 0};
  EXPECT_EQ(f.NewDiscreteStates(c, &info), kOK);
  EXPECT_EQ(info.newDiscreteStatesNeeded, 0);
  EXPECT_EQ(info.terminateSimulation, 0);
  EXPECT_EQ(f.EnterContinuousTimeMode(c), kOK);
  const size_t n = u.desc.derivatives.size();
  std::vector<double> x(n), k1(n), k2(n), k3(n), k4(n), tmp(n), nominal(n);
  EXPECT_EQ(f.GetContinuousStates(c, x.data(), n), kOK);
  EXPECT_EQ(f.GetNominalsOfContinuousStates(c, nominal.data(), n), kOK);
  EXPECT_EQ(u.desc.num_event_indicators, 0);
  EXPECT_EQ(f.GetEventIndicators(c, nullptr, 0), kOK);
  std::vector<std::string> names;
  const std::vector<unsigned> out = OutputRefs(u.desc, &names);
  t.columns = {"t"};
  t.columns.insert(t.columns.end(), names.begin(), names.end());
  auto deriv = [&](double time, const std::vector<double>& state, std::vector<double>& dx) {
    EXPECT_EQ(f.SetTime(c, time), kOK);
    EXPECT_EQ(f.SetContinuousStates(c, state.data(), n), kOK);
    EXPECT_EQ(f.GetDerivatives(c, dx.data(), n), kOK);
  };
  auto record = [&](double time) {
    EXPECT_EQ(f.SetTime(c, time), kOK);
    EXPECT_EQ(f.SetContinuousStates(c, x.data(), n), kOK);
    std::vector<double> row(out.size() + 1);
    row[0] = time;
    EXPECT_EQ(f.GetReal(c, out.data(), out.size(), row.data() + 1), kOK);
    t.rows.push_back(row);
  };
  const int num_out = static_cast<int>(std::lround(t_end / dt_out));
  const double h = dt_out / steps_per_output;
  record(0);
  for (int k = 0; k < num_out; ++k) {
    for (int s = 0; s < steps_per_output; ++s) {
      const double time = k * dt_out + s * h;
      deriv(time, x, k1);
      for (size_t i = 0; i < n; ++i) tmp[i] = x[i] + 0.5 * h * k1[i];
      deriv(time + 0.5 * h, tmp, k2);
      for (size_t i = 0; i < n; ++i) tmp[i] = x[i] + 0.5 * h * k2[i];
      deriv(time + 0.5 * h, tmp, k3);
      for (size_t i = 0; i < n; ++i) tmp[i] = x[i] + h * k3[i];
      deriv(time + h, tmp, k4);
      for (size_t i = 0; i < n; ++i) x[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
      int enter_event = 1, terminate = 1;
      EXPECT_EQ(f.CompletedIntegratorStep(c, 1, &enter_event, &terminate), kOK);
      EXPECT_EQ(enter_event, 0);
      EXPECT_EQ(terminate, 0);
    }
    record((k + 1) * dt_out);
  }
  EXPECT_EQ(f.Terminate(c), kOK);
  f.FreeInstance(c);
  return t;
}

// Co-simulation: fmi2DoStep from output time to output time.
Table RunCoSimulation(Unpacked& u, double t_end, double dt_out,
                      const std::vector<std::pair<std::string, double>>& params) {
  Table t;
  Fmu& f = u.fmu;
  Component c = f.Instantiate("cs", fmi2CoSimulation, u.desc.guid.c_str(), "", &kCallbacks, 0, 0);
  EXPECT_NE(c, nullptr);
  if (!c) return t;
  EXPECT_EQ(f.SetupExperiment(c, 0, 0, 0.0, 1, t_end), kOK);
  for (const auto& [name, value] : params) {
    const unsigned vr = u.desc.vr_of.at(name);
    EXPECT_EQ(f.SetReal(c, &vr, 1, &value), kOK) << name;
  }
  EXPECT_EQ(f.EnterInitializationMode(c), kOK);
  EXPECT_EQ(f.ExitInitializationMode(c), kOK);
  std::vector<std::string> names;
  const std::vector<unsigned> out = OutputRefs(u.desc, &names);
  t.columns = {"t"};
  t.columns.insert(t.columns.end(), names.begin(), names.end());
  auto record = [&](double time) {
    std::vector<double> row(out.size() + 1);
    row[0] = time;
    EXPECT_EQ(f.GetReal(c, out.data(), out.size(), row.data() + 1), kOK);
    t.rows.push_back(row);
  };
  const int num_out = static_cast<int>(std::lround(t_end / dt_out));
  record(0);
  for (int k = 0; k < num_out; ++k) {
    const Status st = f.DoStep(c, k * dt_out, dt_out, 1);
    EXPECT_EQ(st, kOK) << (g_log.empty() ? "" : g_log.back());
    if (st != kOK) break;
    record((k + 1) * dt_out);
  }
  double last = 0;
  EXPECT_EQ(f.GetRealStatus(c, fmi2LastSuccessfulTime, &last), kOK);
  EXPECT_NEAR(last, t_end, 1e-9);
  EXPECT_EQ(f.Terminate(c), kOK);
  f.FreeInstance(c);
  return t;
}

// The largest difference per output of `got` against `ref` (same times).
std::map<std::string, double> MaxDifferences(const Table& ref, const Table& got) {
  std::map<std::string, double> diff;
  EXPECT_EQ(ref.rows.size(), got.rows.size());
  for (size_t c = 1; c < got.columns.size(); ++c) {
    const int rc = ref.Column(got.columns[c]);
    EXPECT_GE(rc, 0) << got.columns[c] << " is not a column of simulate's CSV";
    if (rc < 0) continue;
    double m = 0;
    for (size_t i = 0; i < std::min(ref.rows.size(), got.rows.size()); ++i) {
      EXPECT_NEAR(ref.rows[i][0], got.rows[i][0], 1e-12);
      const double d = std::fabs(ref.rows[i][rc] - got.rows[i][c]);
      m = std::isnan(d) ? INFINITY : std::max(m, d);
    }
    diff[got.columns[c]] = m;
  }
  return diff;
}

// Every output within `tol` times (1 + its largest magnitude).
void ExpectClose(const char* what, const Table& ref, const Table& got, double tol) {
  for (const auto& [name, d] : MaxDifferences(ref, got)) {
    double scale = 0;
    const int rc = ref.Column(name);
    for (const auto& row : ref.rows) scale = std::max(scale, std::fabs(row[rc]));
    std::printf("%s %-10s max |FMU - simulate| = %.3e (scale %.3g)\n", what, name.c_str(), d, scale);
    EXPECT_LE(d, tol * (1 + scale)) << what << " " << name;
  }
}

// Model exchange with events, as an FMI 2.0 master integrates a model with
// event indicators and time events: classical Runge-Kutta at step h, each
// step shortened to end on an output time or on the next time event the FMU
// announced (fmi2EventInfo's nextEventTime). After each step the indicators
// are compared with the signs they had before it; a sign change is located by
// bisection on the step's cubic Hermite interpolant (the derivatives at both
// ends) to 4 units of rounding of t, the FMU is put at the first point past
// it and event mode entered (fmi2NewDiscreteStates until it asks for no
// more), and the states are read again. An output time that an event falls
// on gives the row before the event, as simulate's CSV does. With `failure`,
// fmi2NewDiscreteStates returning an error ends the run (the rows up to it
// are kept) and *failure holds what the FMU logged in that call.
Table RunModelExchangeWithEvents(Unpacked& u, double t_end, double dt_out, double h, EventCounts* count,
                                 const std::vector<std::pair<std::string, double>>& params, bool stop_time_defined,
                                 std::string* failure) {
  Table tab;
  Fmu& f = u.fmu;
  Component c = f.Instantiate("me", fmi2ModelExchange, u.desc.guid.c_str(), "", &kCallbacks, 0, 0);
  EXPECT_NE(c, nullptr);
  if (!c) return tab;
  const size_t n = u.desc.derivatives.size(), ni = static_cast<size_t>(u.desc.num_event_indicators);
  std::vector<double> x(n), x1(n), xe(n), k1(n), k2(n), k3(n), k4(n), f1(n), tmp(n), g1(ni), gt(ni);
  std::vector<int> last_sign(ni, 0);
  std::vector<std::string> names;
  const std::vector<unsigned> out = OutputRefs(u.desc, &names);
  tab.columns = {"t"};
  tab.columns.insert(tab.columns.end(), names.begin(), names.end());
  bool next_defined = false, stop = false, failed = false;
  double next_time = 0;
  auto sign = [](double v) { return v > 0 ? 1 : (v < 0 ? -1 : 0); };
  auto at = [&](double time, const std::vector<double>& state) {
    EXPECT_EQ(f.SetTime(c, time), kOK);
    EXPECT_EQ(f.SetContinuousStates(c, state.data(), n), kOK);
  };
  auto deriv = [&](double time, const std::vector<double>& state, std::vector<double>& dx) {
    at(time, state);
    EXPECT_EQ(f.GetDerivatives(c, dx.data(), n), kOK);
  };
  auto record = [&](double time, const std::vector<double>& state) {
    at(time, state);
    std::vector<double> row(out.size() + 1);
    row[0] = time;
    EXPECT_EQ(f.GetReal(c, out.data(), out.size(), row.data() + 1), kOK);
    tab.rows.push_back(row);
  };
  // In event mode: the event iteration, then back to continuous time.
  auto event_iteration = [&]() {
    fmi2EventInfo info{};
    info.newDiscreteStatesNeeded = fmi2True;
    bool reset = false;
    for (int k = 0; k < 100 && info.newDiscreteStatesNeeded; ++k) {
      const size_t logged = g_log.size();
      const Status st = f.NewDiscreteStates(c, &info);
      if (st == kError && failure) {
        for (size_t i = logged; i < g_log.size(); ++i) *failure += g_log[i] + "\n";
        failed = stop = true;
        return;
      }
      EXPECT_EQ(st, kOK) << (g_log.empty() ? "" : g_log.back());
      reset = reset || info.valuesOfContinuousStatesChanged;
    }
    EXPECT_FALSE(info.newDiscreteStatesNeeded);
    if (reset) ++count->resets;
    stop = info.terminateSimulation;
    next_defined = info.nextEventTimeDefined;
    next_time = info.nextEventTime;
    EXPECT_EQ(f.EnterContinuousTimeMode(c), kOK);
    EXPECT_EQ(f.GetContinuousStates(c, x.data(), n), kOK);
    if (ni) {
      EXPECT_EQ(f.GetEventIndicators(c, gt.data(), ni), kOK);
    }
    for (size_t i = 0; i < ni; ++i)
      if (gt[i] != 0) last_sign[i] = sign(gt[i]);
  };
  auto hermite = [&](double t0, double hs, double time, std::vector<double>& y) {
    const double s = (time - t0) / hs, s2 = s * s, s3 = s2 * s;
    for (size_t i = 0; i < n; ++i)
      y[i] = (2 * s3 - 3 * s2 + 1) * x[i] + (s3 - 2 * s2 + s) * hs * k1[i] + (-2 * s3 + 3 * s2) * x1[i] +
             (s3 - s2) * hs * f1[i];
  };
  EXPECT_EQ(f.SetupExperiment(c, 0, 0, 0.0, stop_time_defined ? 1 : 0, t_end), kOK);
  for (const auto& [name, value] : params) {
    const unsigned vr = u.desc.vr_of.at(name);
    EXPECT_EQ(f.SetReal(c, &vr, 1, &value), kOK) << name;
  }
  EXPECT_EQ(f.EnterInitializationMode(c), kOK);
  EXPECT_EQ(f.ExitInitializationMode(c), kOK);
  event_iteration();
  record(0, x);
  double t = 0;
  const int num_out = static_cast<int>(std::lround(t_end / dt_out));
  for (int k = 0; k < num_out && !stop; ++k) {
    const double T = (k + 1) * dt_out;
    bool recorded = false;
    while (t < T && !stop) {
      double t1 = t + h >= T - 1e-9 * h ? T : t + h;
      bool time_event = false;
      if (next_defined) {
        EXPECT_GT(next_time, t) << "a time event announced for the past";
        if (next_time <= t1) t1 = next_time, time_event = true;
      }
      const double hs = t1 - t;
      deriv(t, x, k1);
      for (size_t i = 0; i < n; ++i) tmp[i] = x[i] + 0.5 * hs * k1[i];
      deriv(t + 0.5 * hs, tmp, k2);
      for (size_t i = 0; i < n; ++i) tmp[i] = x[i] + 0.5 * hs * k2[i];
      deriv(t + 0.5 * hs, tmp, k3);
      for (size_t i = 0; i < n; ++i) tmp[i] = x[i] + hs * k3[i];
      deriv(t1, tmp, k4);
      for (size_t i = 0; i < n; ++i) x1[i] = x[i] + hs / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
      deriv(t1, x1, f1);  // the FMU stands at (t1, x1)
      if (ni) {
        EXPECT_EQ(f.GetEventIndicators(c, g1.data(), ni), kOK);
      }
      double te = INFINITY;
      for (size_t i = 0; i < ni; ++i) {
        const int s1 = sign(g1[i]);
        if (s1 == 0 || s1 == last_sign[i]) continue;
        double a = t, b = t1;
        while (b - a > 4 * 2.220446049250313e-16 * std::max(1.0, std::fabs(b))) {
          const double mid = 0.5 * (a + b);
          hermite(t, hs, mid, xe);
          at(mid, xe);
          EXPECT_EQ(f.GetEventIndicators(c, gt.data(), ni), kOK);
          (sign(gt[i]) == s1 ? b : a) = mid;
        }
        te = std::min(te, b);
      }
      if (te < INFINITY) {  // a state event at te
        if (te == t1)
          xe = x1;
        else
          hermite(t, hs, te, xe);
        if (te == T) record(T, xe), recorded = true;
        at(te, xe);
        EXPECT_EQ(f.EnterEventMode(c), kOK);
        ++count->state_events;
        event_iteration();
        t = te;
        continue;
      }
      at(t1, x1);
      int enter_event = 1, terminate = 1;
      EXPECT_EQ(f.CompletedIntegratorStep(c, 1, &enter_event, &terminate), kOK);
      x = x1;
      t = t1;
      for (size_t i = 0; i < ni; ++i)
        if (g1[i] != 0) last_sign[i] = sign(g1[i]);
      if (time_event) {
        if (t == T) record(T, x), recorded = true;
        EXPECT_EQ(f.EnterEventMode(c), kOK);
        ++count->time_events;
        event_iteration();
      }
    }
    if (failed) break;
    if (!recorded) record(T, x);
  }
  if (!failed) EXPECT_EQ(f.Terminate(c), kOK);
  f.FreeInstance(c);
  return tab;
}

// simulate's rows at the output times k dt_out of a model with events: its
// CSV also has two rows at each event (before and after, the same t), which
// are left out; at an output time that an event falls on, the first row of
// that time is the output's, the state before the event (docs/events.md).
Table GridRows(const Table& csv, double t_end, double dt_out) {
  Table grid;
  grid.columns = csv.columns;
  const int num = static_cast<int>(std::lround(t_end / dt_out)) + 1;
  for (size_t i = 0; i < csv.rows.size();) {
    size_t j = i + 1;
    while (j < csv.rows.size() && csv.rows[j][0] == csv.rows[i][0]) ++j;
    const double next = static_cast<double>(grid.rows.size()) * dt_out;
    if (std::fabs(csv.rows[i][0] - next) <= 1e-12) grid.rows.push_back(csv.rows[i]);
    i = j;
  }
  EXPECT_EQ(static_cast<int>(grid.rows.size()), num);
  for (size_t k = 0; k < grid.rows.size(); ++k)
    EXPECT_NEAR(grid.rows[k][0], static_cast<double>(k) * dt_out, 1e-12) << "row " << k;
  return grid;
}

// ---- inputs, units and tunable parameters, driven by tests/fmi2_master.c ----

std::string Num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

// examples/<model>.yaml with `from` replaced by `to` (once), as <name>.yaml in `dir`.
fs::path ModelVariant(const std::string& model, const std::string& from, const std::string& to, const fs::path& dir,
                      const std::string& name) {
  std::string yaml = paynter::testing::ReadFileBytes(Source("examples/" + model + ".yaml"));
  const size_t at = yaml.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) yaml.replace(at, from.size(), to);
  const fs::path p = dir / (name + ".yaml");
  std::ofstream(p) << yaml;
  return p;
}

// `paynter simulate` of a model file at rtol 1e-10, atol 1e-12; an event's
// rows (the output time, and two rows where the event was located, within
// 1e-12 s of it) become the last (the values after it, at the output time).
Table SimulateFile(const fs::path& model, const std::string& options, double t_end, double dt_out, const fs::path& dir,
                   const std::string& name) {
  const fs::path csv = dir / (name + ".csv");
  const Result r = Shell(std::string(PAYNTER_EXE) + " simulate " + model.string() + " --rtol 1e-10 --atol 1e-12 " +
                         options + " --t-end " + Num(t_end) + " --dt-out " + Num(dt_out) + " -o " + csv.string());
  EXPECT_EQ(r.status, 0) << r.output;
  Table t = paynter::testing::ReadCsvTable(csv), out;
  out.columns = t.columns;
  for (auto& row : t.rows) {
    if (!out.rows.empty() && std::fabs(out.rows.back()[0] - row[0]) < 1e-12)
      out.rows.back() = row;
    else
      out.rows.push_back(row);
  }
  return out;
}

// A run of fmi2_master on an unpacked FMU: the outputs in their display units
// (as simulate writes them), under their names.
MasterRun RunMaster(const Unpacked& u, const std::string& kind, double t_end, double dt_out, const std::string& options,
                    const std::string& name) {
  std::vector<std::string> names;
  const std::vector<unsigned> vrs = OutputRefs(u.desc, &names);
  std::string out;
  for (unsigned vr : vrs) out += (out.empty() ? "" : ",") + std::to_string(vr);
  const fs::path csv1 = u.dir / (name + "_1.csv"), csv2 = u.dir / (name + "_2.csv");
  const Result r = Shell(std::string(FMI2_MASTER) + " " + u.so + " '" + u.desc.guid + "' " + kind + " " + Num(t_end) +
                         " " + Num(dt_out) + " --nx " + std::to_string(u.desc.derivatives.size()) + " --out " + out +
                         " --csv " + csv1.string() + " --then-csv " + csv2.string() + " " + options);
  EXPECT_EQ(r.status, 0) << r.output;
  MasterRun m;
  for (auto [path, table] : {std::pair{csv1, &m.first}, std::pair{csv2, &m.second}}) {
    table->columns = {"t"};
    table->columns.insert(table->columns.end(), names.begin(), names.end());
    std::ifstream f(path);
    for (std::string line; std::getline(f, line);) {
      std::stringstream row(line);
      std::vector<double> values;
      for (std::string c; std::getline(row, c, ',');) values.push_back(std::stod(c));
      for (size_t k = 1; k < values.size() && k - 1 < names.size(); ++k)
        values[k] *= u.desc.DisplayFactor(names[k - 1]);
      table->rows.push_back(values);
    }
  }
  return m;
}

std::string Vr(const Unpacked& u, const std::string& name) {
  EXPECT_TRUE(u.desc.vr_of.count(name)) << name;
  return u.desc.vr_of.count(name) ? std::to_string(u.desc.vr_of.at(name)) : "0";
}

// Every output of `got` within `tol` of `ref`'s relative to the output's
// largest magnitude; the largest relative difference is printed.
void ExpectAgree(const char* what, const Table& ref, const Table& got, double tol) {
  ASSERT_EQ(ref.rows.size(), got.rows.size()) << what;
  for (const auto& [name, d] : MaxDifferences(ref, got)) {
    double scale = 0;
    const int rc = ref.Column(name);
    for (const auto& row : ref.rows) scale = std::max(scale, std::fabs(row[rc]));
    std::printf("%s %-8s max |FMU - simulate| = %.3e, relative to its largest %.3g: %.3e\n", what, name.c_str(), d,
                scale, d / scale);
    EXPECT_LE(d, tol * scale) << what << " " << name;
  }
}

}  // namespace fmi_import
