// src/simulation/events.cc — see events.h. The indicators, in order: one per
// condition mode, one per event (`when:`), two per switched element.
//
// At an event: a row with the state and modes just before; the events' resets
// (all computed from the values before any is applied); the crossed
// conditions' modes flipped; the switched elements' new modes (friction
// sliding -> stuck when holding needs no more than the static limit, else it
// slides back; stuck -> sliding in the direction of the force; a diode
// conducting -> blocking when its current falls to zero, blocking ->
// conducting when the voltage across it reaches the forward voltage); then
// every mode settled against the state; a row with the state and modes after.
#include "events.h"

#include <fmt/format.h>

#include <cmath>

#include "paynter/error.h"

namespace paynter::internal {

namespace {
constexpr int kSettleRounds = 20;
}

EventHandling::EventHandling(ModelWorkspace& workspace, std::function<void(double, const double*, bool)> record)
    : w_(workspace), m_(workspace.model()), record_(std::move(record)) {
  num_indicators_ = static_cast<int>(m_.modes().size() + m_.event_rows().size() + 2 * m_.switches().size());
}

void EventHandling::Indicators(double t, const double* x, double* g) {
  w_.CalcEventSlots(t, x);
  int k = 0;
  for (const ModeRow& r : m_.modes()) g[k++] = w_.Slot(r.indicator_slot);
  for (const EventRow& r : m_.event_rows()) g[k++] = w_.Slot(r.indicator_slot);
  for (const SwitchRow& s : m_.switches()) {
    g[k++] = w_.Slot(s.indicator_slots[0]);
    g[k++] = w_.Slot(s.indicator_slots[1]);
  }
}

void EventHandling::TryHold(const SwitchRow& s, double t, const double* x) {
  w_.SetMode(s.held_slot, 1);
  w_.CalcEventSlots(t, x);
  const double effort = w_.Slot(s.effort_slot), limit = w_.Slot(s.limit_slot);
  if (s.kind == 0) {  // friction: stuck while |effort| <= the static limit
    if (std::fabs(effort) <= limit) return;
    w_.SetMode(s.held_slot, 0);
    w_.SetMode(s.direction_slot, effort > 0 ? 1 : -1);
  } else {  // diode: blocking while the voltage stays below the forward voltage
    if (effort < limit) return;
    w_.SetMode(s.held_slot, 0);
  }
}

void EventHandling::Settle(double t, const double* x) {
  for (int round = 0; round < kSettleRounds; ++round) {
    w_.CalcEventSlots(t, x);
    bool changed = false;
    for (const ModeRow& r : m_.modes()) {
      const double g = w_.Slot(r.indicator_slot);
      if (g == 0) continue;  // on the boundary: the crossing decided
      const double want = g > 0 ? 1 : 0;
      if (w_.Slot(r.slot) != want) {
        w_.SetMode(r.slot, want);
        changed = true;
      }
    }
    // Switched elements change mode at their own events only (at the switch
    // their indicator is zero up to rounding, on either side).
    if (!changed) return;
  }
  ThrowAt({}, "",
          fmt::format("the modes do not settle at t = {}: after {} rounds a condition or switched element still "
                      "changes its mode",
                      t, kSettleRounds),
          "", "",
          "the model's conditions contradict each other here (a mode whose own condition depends on it), or a "
          "reset leaves its state on both sides of a condition");
}

void EventHandling::Attach(OdeProblem* p, double t0, const std::vector<double>& x0, double t_end) {
  t_end_ = t_end;
  firings_.assign(m_.event_rows().size(), Firings{});
  // Initial modes: conditions from their indicators (strictness at zero);
  // friction stuck when the sliding speed is zero and the force allows it,
  // else sliding with its speed; a diode blocking unless the voltage reaches
  // its forward voltage.
  for (const ModeRow& r : m_.modes()) w_.SetMode(r.slot, 0);
  for (const SwitchRow& s : m_.switches()) {
    w_.SetMode(s.held_slot, 0);
    w_.SetMode(s.direction_slot, 1);
  }
  for (int round = 0; round <= kSettleRounds; ++round) {
    w_.CalcEventSlots(t0, x0.data());
    bool changed = false;
    for (const ModeRow& r : m_.modes()) {
      const double g = w_.Slot(r.indicator_slot);
      const double want = (g > 0 || (g == 0 && !r.strict)) ? 1 : 0;
      if (w_.Slot(r.slot) != want) {
        w_.SetMode(r.slot, want);
        changed = true;
      }
    }
    if (!changed) break;
    if (round == kSettleRounds) Settle(t0, x0.data());  // reports the contradiction
  }
  for (const SwitchRow& s : m_.switches()) {
    w_.CalcEventSlots(t0, x0.data());
    const double flow = w_.Slot(s.flow_slot);
    if (s.kind == 0 && flow != 0) {
      w_.SetMode(s.held_slot, 0);
      w_.SetMode(s.direction_slot, flow > 0 ? 1 : -1);
    } else {
      TryHold(s, t0, x0.data());
    }
  }
  Settle(t0, x0.data());

  p->num_events = num_indicators_;
  p->event_direction.assign(num_indicators_, 0);
  for (size_t k = 0; k < m_.event_rows().size(); ++k) p->event_direction[m_.modes().size() + k] = 1;
  p->indicators = [this](double t, const double* x, double* g) { Indicators(t, x, g); };
  p->on_event = [this](double t, double* x, const int* crossed) { return OnEvent(t, x, crossed); };
}

std::vector<double> EventHandling::Modes() const {
  std::vector<double> v;
  for (const ModeRow& r : m_.modes()) v.push_back(w_.Slot(r.slot));
  for (const SwitchRow& s : m_.switches()) {
    v.push_back(w_.Slot(s.held_slot));
    v.push_back(w_.Slot(s.direction_slot));
  }
  return v;
}

void EventHandling::SetModes(const std::vector<double>& v) {
  size_t k = 0;
  for (const ModeRow& r : m_.modes()) w_.SetMode(r.slot, v[k++]);
  for (const SwitchRow& s : m_.switches()) {
    w_.SetMode(s.held_slot, v[k++]);
    w_.SetMode(s.direction_slot, v[k++]);
  }
}

void EventHandling::CheckAccumulation(size_t event, double t) {
  Firings& f = firings_[event];
  if (f.count++ == 0) {
    f.last = t;
    return;
  }
  const double interval = t - f.last, before = f.interval;
  const bool shrinks = before > 0 && interval <= kZenoRatio * before;
  const double ratio = shrinks ? interval / before : 0;
  f.shrinking = shrinks ? f.shrinking + 1 : 0;
  f.geometric = !shrinks ? 0 : f.ratio > 0 && std::abs(ratio - f.ratio) <= kZenoSameRatio * f.ratio ? f.geometric + 1 : 1;
  f.ratio = ratio;
  f.interval = interval;
  f.last = t;
  if (f.shrinking < kZenoFirings && f.geometric < kZenoGeometric) return;
  // The intervals to come, if they shrink as the last did, add up to
  // interval * r / (1 - r).
  const double r = interval / before;
  const double point = t + interval * r / (1 - r);
  if (point > t_end_) return;
  const std::string& name = m_.event_rows()[event].name;
  ThrowAt({}, name,
          fmt::format(
              "event '{}' fires ever sooner: {} times in a row, each interval at most {} of the one before (the last "
              "{:.3g} s), so its firings accumulate at about t = {:.6g}, before t_end = {} (a Zeno point)",
              name, f.shrinking, kZenoRatio, interval, point, t_end_),
          fmt::format("at most {} firings in a row at intervals shrinking by {}% or more, or {} shrinking by the "
                      "same ratio (to {}% of it), when they would accumulate before t_end",
                      kZenoFirings, std::lround(100 * (1 - kZenoRatio)), kZenoGeometric,
                      std::lround(100 * kZenoSameRatio)),
          fmt::format("firing {} of '{}' at t = {:.6g}", f.count, name, t),
          fmt::format("end the run before t = {:.4g}, or give the model what happens there (an event with "
                      "'stop: true', or a mode in which the ball rests)",
                      point));
}

// The events' indicators at (t, x) under the present modes.
std::vector<double> EventHandling::EventIndicators(double t, const double* x) {
  w_.CalcEventSlots(t, x);
  std::vector<double> g;
  for (const EventRow& r : m_.event_rows()) g.push_back(w_.Slot(r.indicator_slot));
  return g;
}

void EventHandling::Fire(size_t j, double t, bool* stop, std::vector<std::pair<int, double>>* resets) {
  const EventRow& r = m_.event_rows()[j];
  if (!r.stop) CheckAccumulation(j, t);
  *stop = *stop || r.stop;
  for (size_t i = 0; i < r.reset_states.size(); ++i) resets->emplace_back(r.reset_states[i], w_.Slot(r.reset_slots[i]));
}

void EventHandling::ApplyResets(double t, double* x, const std::vector<std::pair<int, double>>& resets) {
  for (const auto& [state, value] : resets) {
    if (!std::isfinite(value)) {
      ThrowAt({}, "", fmt::format("an event's reset gives {} = {} at t = {}", m_.state_names()[state], value, t), "",
              "", "check the reset's expression");
    }
    x[state] = value;
  }
}

bool EventHandling::OnEvent(double t, double* x, const int* crossed) {
  const std::vector<double> before = Modes();
  const std::vector<double> x_before(x, x + m_.num_states());
  // The events' conditions before anything changes: an event whose
  // condition the instant makes true without a crossing of its own (it
  // compares a signal that jumps here, or another event's reset moved its
  // state) fires too, below.
  std::vector<double> g_prev = EventIndicators(t, x);
  std::vector<bool> fired(m_.event_rows().size(), false);
  int k = 0;
  // Conditions: the mode follows the direction of the crossing.
  for (const ModeRow& r : m_.modes()) {
    if (crossed[k]) w_.SetMode(r.slot, crossed[k] > 0 ? 1 : 0);
    ++k;
  }
  // Events: resets from the values before the event.
  bool stop = false;
  std::vector<std::pair<int, double>> resets;
  w_.CalcEventSlots(t, x);
  for (size_t j = 0; j < m_.event_rows().size(); ++j) {
    if (crossed[k++] <= 0) continue;
    fired[j] = true;
    Fire(j, t, &stop, &resets);
  }
  ApplyResets(t, x, resets);
  bool any_reset = !resets.empty();
  // Switched elements.
  for (const SwitchRow& s : m_.switches()) {
    const int c0 = crossed[k], c1 = crossed[k + 1];
    k += 2;
    if (!c0 && !c1) continue;
    const bool held = w_.Slot(s.held_slot) > 0.5;
    if (held) {
      // The limit was reached: slide in the direction of the force (conduct).
      // (Leaving the limit, as on entering the held mode, is no switch.)
      if (c0 > 0) {
        w_.SetMode(s.held_slot, 0);
        w_.SetMode(s.direction_slot, 1);
      } else if (s.kind == 0 && c1 < 0) {
        w_.SetMode(s.held_slot, 0);
        w_.SetMode(s.direction_slot, -1);
      }
    } else if (s.kind == 0) {
      // The sliding speed crossed zero against the sliding direction: stick,
      // or slide on in the direction of the force. (A crossing with it is the
      // start of sliding from the stuck speed, which is zero up to rounding.)
      if (c0 == -w_.Slot(s.direction_slot)) TryHold(s, t, x);
    } else if (c0 < 0) {
      w_.SetMode(s.held_slot, 1);  // the current fell to zero: block
    }
  }
  Settle(t, x);
  // Events made true by the instant itself, each at most once per instant,
  // in rounds (a round's resets computed from the values before it), until
  // no more conditions turn true: every round with resets fires an event
  // not fired before, so there are at most as many rounds as events.
  for (;;) {
    const std::vector<double> g_now = EventIndicators(t, x);
    resets.clear();
    for (size_t j = 0; j < g_now.size(); ++j) {
      if (fired[j] || !(g_prev[j] <= 0 && g_now[j] > 0)) continue;
      fired[j] = true;
      Fire(j, t, &stop, &resets);
    }
    g_prev = g_now;
    if (resets.empty()) break;  // (a stop alone changes no state)
    ApplyResets(t, x, resets);
    any_reset = true;
    Settle(t, x);
  }
  // A crossing that changes nothing (a direction no event asks for, sliding
  // setting off from a speed that is zero up to rounding) is no event.
  const std::vector<double> after = Modes();
  if (after == before && !any_reset && !stop) return false;
  ++events_;
  SetModes(before);
  record_(t, x_before.data(), false);
  SetModes(after);
  record_(t, x, true);
  return stop;
}

}  // namespace paynter::internal
