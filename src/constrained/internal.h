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

// The strategies, one file each.
const ConstraintMethodStrategy& LagrangeMultipliersStrategy();  // lagrange_multipliers.cc
const ConstraintMethodStrategy& MinimalCoordinatesStrategy();   // minimal_coordinates.cc
const ConstraintMethodStrategy& ParasiticStrategy();            // parasitic.cc
const ConstraintMethodStrategy& ZcpStrategy();                  // zcp.cc

}  // namespace paynter::constrained
