// src/constrained/internal.h — shared by the methods' files; not installed.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "paynter/constrained.h"
#include "paynter/constraint_method.h"

namespace paynter::constrained {

// A displacement state (a body's position or orientation coordinate, a
// joint's coordinate), as the equation builder names state origins: the
// states position constraints may depend on.
inline bool IsPositionOrigin(const std::string& origin) {
  return origin.rfind("displacement (", 0) == 0 || origin == "integral of its rate";
}

// The bodies' orientation quaternions of the multibody library: the index of
// the first state of every run of consecutive states <B>_q0 .. <B>_q3. The
// orientation does not depend on a quaternion's norm (R is formed from the
// normalized quaternion), so the position constraints leave the norm free.
std::vector<int> QuaternionGroups(const CompiledModel& model);

// The constraint drift at an output time (t, x): recorded in the report's
// largest drifts, and, beyond options.drift_tolerance, an Error that names
// the joint and the method (strategy.cc).
void WatchDrift(const CompiledModel& model, const ConstrainedOptions& options, ConstraintMethod method,
                ConstraintProjector& watcher, double t, const double* x, ConstrainedReport* report);

// The model as it is, from x0, `watch` called at every output (strategy.cc).
Solution SimulateAsItIs(ModelWorkspace& workspace, const std::vector<double>& x0, const SolverOptions& solver,
                        const ConstrainedOptions& options, const std::function<void(double, const double*)>& watch);

// A view's check that the model has constraint sources for `method` (a
// located Error otherwise).
void RequireConstraintSources(const Model& model, const std::string& file, ConstraintMethod method);

// The energy balance kept by projection (--project-energy; energy.cc). The
// energy pass gives the run `energy_stored` (an output) and the integrals
// `energy_delivered` and `energy_dissipated` (states); after each projection
// onto the joints, Restore scales the momenta by one factor s so that
// stored = stored(t0) + delivered - dissipated. The kinetic energy is
// quadratic in the momenta and the velocity constraints are linear and
// homogeneous in them (A(q) p = 0), so the scaled state still satisfies the
// joints, and of the states that do and hold that energy it is the nearest to
// the one given in the kinetic energy's metric (the projection onto the
// energy's level set within the constraints' subspace).
class EnergyKeeper {
 public:
  // Checks that the run's model allows it (located Errors otherwise): the
  // energy pass's outputs and states, stored energy = sum of p^2 / (2 I) over
  // the momentum states plus a function of the other states, joints that
  // prescribe no velocity.
  EnergyKeeper(ModelWorkspace& workspace, double t0, const std::vector<double>& x0);
  // Scales the momenta of x at t; true when it changed them. Leaves x as it is
  // where the kinetic energy is too small to carry the error (below
  // kLargestCorrection of it: a turning point, a start from rest): the balance
  // is absolute, so the next step that can take the correction takes it all.
  bool Restore(double t, double* x);

  static constexpr double kLargestCorrection = 1e-2;  // of the kinetic energy
  int corrections = 0;           // steps and outputs whose momenta were scaled
  int skipped = 0;               // left as they were (see Restore)
  double largest_correction = 0;  // largest |delta T| / T applied
  double largest_error = 0;       // largest |stored - balance| / (stored energy's scale) met

 private:
  ModelWorkspace& w_;
  std::vector<int> momenta_;
  std::vector<double> inertia_, outputs_;
  int stored_ = -1, delivered_ = -1, dissipated_ = -1;
  double base_ = 0;   // stored(t0) - delivered(t0) + dissipated(t0)
  double scale_ = 0;  // the largest |stored| met: what the error is relative to
};

// The lagrange-multipliers method's problem (lagrange_multipliers.cc): the
// compiled right-hand side, which solves the constraint forces, and
// `projector` after every step, its tolerances set from the run's
// (min(1e-10, 1e-3 atol)). zcp's bridges over singular configurations use it too.
OdeProblem ProjectedProblem(ModelWorkspace& workspace, ConstraintProjector& projector, const SolverOptions& solver);

// The strategies, one file each.
const ConstraintMethodStrategy& LagrangeMultipliersStrategy();  // lagrange_multipliers.cc
const ConstraintMethodStrategy& MinimalCoordinatesStrategy();   // minimal_coordinates.cc
const ConstraintMethodStrategy& ParasiticStrategy();            // parasitic.cc
const ConstraintMethodStrategy& ZcpStrategy();                  // zcp.cc

}  // namespace paynter::constrained
