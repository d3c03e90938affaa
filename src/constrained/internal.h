// src/constrained/internal.h — shared by the methods' files; not installed.
#pragma once

#include <functional>
#include <vector>

#include "paynter/constrained.h"

namespace paynter::constrained {

// Integrates `problem` from x0 and records the model's outputs. When the
// integrated state is not the model's (minimal coordinates), full_state maps
// it to the model's state; watch sees every recorded full state.
// Rows are appended to `out` as they come (so they survive an exception
// thrown by watch); its columns are set when empty; its stats are added to.
void Run(const CompiledModel& model, const OdeProblem& problem, const std::vector<double>& x0,
         const SolverOptions& options, const std::function<void(double, const double*, double*)>& full_state,
         const std::function<void(double, const double*)>& watch, Solution* out);

// The minimal-coordinates method (minimal_coordinates.cc), from an assembled start.
Solution MinimalCoordinates(const CompiledModel& model, const std::vector<double>& x0, const SolverOptions& solver,
                            const ConstrainedOptions& options, ConstrainedReport* report);

// The zcp method (zcp.cc), from an assembled start.
Solution Zcp(const CompiledModel& model, const std::vector<double>& x0, const SolverOptions& solver,
             const ConstrainedOptions& options, ConstrainedReport* report);

}  // namespace paynter::constrained
