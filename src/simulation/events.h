// src/simulation/events.h — a compiled model's modes, events and switched elements
// as the solvers see them (OdeProblem's event fields); docs/events.md.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "paynter/simulation.h"

namespace paynter::internal {

class EventHandling {
 public:
  // `record(t, x, after)` records a row of the model at (t, x) with the
  // current modes: the row before an event (unless a row at t was just
  // recorded) and, with `after`, the row after it, whatever came before.
  EventHandling(ModelWorkspace& workspace, std::function<void(double, const double*, bool)> record);

  // Sets the modes consistent with the state at (t0, x0) and fills the
  // problem's indicators, directions and on_event. x0 is not changed.
  // t_end: a Zeno point of an event before it stops the run (see Firings).
  void Attach(OdeProblem* problem, double t0, const std::vector<double>& x0, double t_end);
  // Events that changed a mode or a state, or stopped the run (each gave two rows).
  long events() const { return events_; }

 private:
  void Indicators(double t, const double* x, double* g);
  bool OnEvent(double t, double* x, const int* crossed);
  // Brings the condition modes in line with their indicators' signs, a
  // bounded number of times (switched elements change at their events only).
  void Settle(double t, const double* x);
  // A switched element's held mode is admissible at (t, x): its effort while
  // held stays within the limit. Sets the modes to the result.
  void TryHold(const SwitchRow& s, double t, const double* x);

  // An event whose firings accumulate (a Zeno point, such as a bouncing
  // ball coming to rest) would be passed silently once the solver can no
  // longer tell its firings apart: when one event has fired kZenoFirings
  // times in a row, each interval at most kZenoRatio of the one before, and
  // the geometric series of its intervals ends before t_end, the run stops
  // with an error naming the event and the point (docs/events.md). Intervals
  // that shrink by the same ratio (to kZenoSameRatio of it) are a geometric
  // series already after kZenoGeometric of them: a ball that loses half its
  // speed at each impact bounces below the solver's tolerance after some
  // fifteen, before kZenoFirings could be counted.
  static constexpr int kZenoFirings = 20;
  static constexpr int kZenoGeometric = 5;
  static constexpr double kZenoRatio = 0.95;
  static constexpr double kZenoSameRatio = 0.1;
  struct Firings {
    double last = 0;       // the time of the last firing
    double interval = -1;  // since the firing before (-1: none yet)
    double ratio = 0;      // of the last interval to the one before (0: not shrinking)
    int shrinking = 0;     // intervals in a row at most kZenoRatio of the one before
    int geometric = 0;     // of those, in a row with the same ratio
    long count = 0;
  };
  void CheckAccumulation(size_t event, double t);
  std::vector<double> EventIndicators(double t, const double* x);
  // Event row j fires: its stop, and its resets from the slots as computed.
  void Fire(size_t j, double t, bool* stop, std::vector<std::pair<int, double>>* resets);
  void ApplyResets(double t, double* x, const std::vector<std::pair<int, double>>& resets);

  ModelWorkspace& w_;  // the run's: modes, indicators and resets are its slots
  const CompiledModel& m_;
  std::function<void(double, const double*, bool)> record_;
  std::vector<Firings> firings_;  // per event row
  double t_end_ = 0;
  std::vector<double> Modes() const;
  void SetModes(const std::vector<double>& v);
  int num_indicators_ = 0;
  long events_ = 0;
};

}  // namespace paynter::internal
