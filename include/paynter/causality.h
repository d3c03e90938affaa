// paynter/causality.h — causal strokes on a Model's bonds (the CausalGraph).
//
// A causality procedure decides, for every bond, which end receives the effort
// (the end carrying the causal stroke). The sequential causality assignment
// procedure (SCAP, Karnopp & Rosenberg) prefers integral causality: sources, then
// fixed-causality elements, then storage elements, then resistors, then any bond
// left, each choice propagated through junctions, transformers and gyrators.
#pragma once

#include <string>
#include <vector>

#include "paynter/model.h"

namespace paynter {

enum class CausalityProcedure { kSCAP };
CausalityProcedure ParseProcedure(const std::string& name);  // throws Error
std::string ProcedureName(CausalityProcedure p);

struct CausalityOptions {
  CausalityProcedure procedure = CausalityProcedure::kSCAP;
};

struct CausalConflict {
  int element = -1;        // where the conflict appears (a junction, a two-port or a source)
  std::vector<int> bonds;  // the bonds that disagree
  std::string message;
};

struct CausalGraph {
  CausalityProcedure procedure = CausalityProcedure::kSCAP;
  // effort_to[b]: the element of bond b that receives the effort (the stroke end).
  std::vector<int> effort_to;
  // Why each bond got its causality: "source Se1", "integral I1", "propagated at J1", ...
  std::vector<std::string> reason;
  std::vector<int> integral_storage;    // storage elements in integral causality
  std::vector<int> derivative_storage;  // storage elements in derivative causality
  std::vector<CausalConflict> conflicts;

  bool EffortInto(int element, int bond) const { return effort_to[bond] == element; }
};

CausalGraph AssignCausality(const Model& model, const CausalityOptions& options = {});

// Throws Error describing the first conflict, if any (equations need a conflict-free graph).
void RequireNoConflicts(const Model& model, const CausalGraph& graph);

}  // namespace paynter
