// src/constrained/internal.h — shared by the methods' files; not installed.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "paynter/constrained.h"

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
// the joint and the method (methods.cc).
void WatchDrift(const CompiledModel& model, const ConstrainedOptions& options, ConstraintMethod method,
                ConstraintProjector& watcher, double t, const double* x, ConstrainedReport* report);

// The minimal-coordinates method (minimal_coordinates.cc), from an assembled start.
Solution MinimalCoordinates(ModelWorkspace& workspace, const std::vector<double>& x0, const SolverOptions& solver,
                            const ConstrainedOptions& options, ConstrainedReport* report);

// The zcp method (zcp.cc), from an assembled start.
Solution Zcp(ModelWorkspace& workspace, const std::vector<double>& x0, const SolverOptions& solver,
             const ConstrainedOptions& options, ConstrainedReport* report);

}  // namespace paynter::constrained
