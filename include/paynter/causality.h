// paynter/causality.h — causal strokes on a Model's bonds (the CausalGraph).
//
// A causality procedure decides, for every bond, which end receives the effort
// (the end carrying the causal stroke). One engine propagates each choice
// through junctions, transformers and gyrators; the procedures are strategies
// that differ in the order of their choices and in what they do at a conflict:
//   SCAP   sequential (Karnopp & Rosenberg): sources, fixed-causality elements,
//          storage in integral causality, resistors, any bond left.
//   HaCAP  Hamilton: sources, then integral causality on the I elements of the
//          independent generalized 1-junctions, the rest propagated (then as SCAP).
//   LaCAP  Lagrange (Marquis-Favre & Scavarda 2002): sources, then an artificial
//          flow source (ASF) on every generalized 1-junction at once; a
//          0-junction left with no bond to impose its effort becomes a
//          constrained 0-junction with an artificial effort source (AES, a
//          Lagrange multiplier); C integral, I derivative, then as SCAP.
//   LCAP   Lagrangian (Karnopp 1977): as LaCAP, on generalized velocities that
//          paynter proposes (the 1-junctions of the I elements SCAP leaves in
//          integral causality); a 1-junction still left with no bond to impose
//          its flow gets an ASF too.
//   RCAP   relaxed (Joseph & Martens 1974): only the causality that sources and
//          the junction structure force; every other bond is left relaxed.
#pragma once

#include <string>
#include <vector>

#include "paynter/model.h"

namespace paynter {

enum class CausalityProcedure { kSCAP, kHaCAP, kLaCAP, kLCAP, kRCAP, kBHCAP };
CausalityProcedure ParseProcedure(const std::string& name);  // throws Error
std::string ProcedureName(CausalityProcedure p);

struct CausalityOptions {
  CausalityProcedure procedure = CausalityProcedure::kSCAP;
  // LaCAP: the generalized 1-junctions (default: the model's `generalized`, else
  // the proposed independent ones). HaCAP: the independent ones (default: the
  // model's `independent`, else proposed). Proposed = the 1-junctions of the I
  // elements SCAP leaves in integral causality.
  std::vector<int> generalized;
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
  std::vector<int> generalized;   // generalized 1-junctions (ASF or HaCAP's integral I)
  std::vector<int> constrained;   // constrained 0-junctions (AES)
  std::vector<int> relaxed;       // RCAP: bonds left without causality
  bool proposed = false;          // generalized junctions proposed by paynter

  bool EffortInto(int element, int bond) const { return effort_to[bond] == element; }
};

// LaCAP and LCAP add their artificial sources (and bonds) to the model, so they
// need a mutable model; the other procedures leave it as it is.
CausalGraph AssignCausality(Model& model, const CausalityOptions& options = {});
CausalGraph AssignCausality(const Model& model, const CausalityOptions& options = {});

// The 1-junctions of the I elements that SCAP puts in integral causality: one
// per degree of freedom of a mechanism.
std::vector<int> ProposeIndependentJunctions(const Model& model);

// Throws Error describing the first conflict, if any (equations need a conflict-free graph).
void RequireNoConflicts(const Model& model, const CausalGraph& graph);

}  // namespace paynter
