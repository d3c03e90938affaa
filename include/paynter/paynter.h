// paynter/paynter.h — the whole public API.
//
//   Model m = LoadModel("examples/B1_pendulum.yaml");            // pipeline/ (the front end)
//   CausalGraph g = AssignCausality(m);                          // causality/
//   EquationSystem eqs = BuildEquations(m, g);                   // equations/
//   CompiledModel cm(eqs);                                       // codegen/ (constant)
//   Solution s = Simulate(cm, {.t_end = 10});                    // a run (its own ModelWorkspace)
//   WriteCsv(s, "b1.csv");                                       // io/
//
// Reports (text or LaTeX equations, causality, drawings, plots) are in
// paynter/report.h.
#pragma once

#include "paynter/analysis.h"
#include "paynter/causality.h"
#include "paynter/codegen.h"
#include "paynter/constrained.h"
#include "paynter/equations.h"
#include "paynter/error.h"
#include "paynter/files.h"
#include "paynter/fmi.h"
#include "paynter/linear.h"
#include "paynter/model.h"
#include "paynter/multibody.h"
#include "paynter/pipeline.h"
#include "paynter/progress.h"
#include "paynter/report.h"
#include "paynter/run.h"
#include "paynter/simulation.h"
#include "paynter/solvers.h"
#include "paynter/units.h"
