// paynter/zcp.h — zero-order causal paths (ZCPs) of a causal bond graph and the
// DAE index they imply (Felez et al., as summarized in seed 003).
//
// Once causality is assigned, each bond variable (e_b, f_b) is computed by one
// element from other bond variables. A causal path is a chain of such
// computations through the junction structure (0, 1, TF, MTF, GY, MGY) and the
// algebraic elements (R); a zero-order causal path has no integration on it.
//   class 1  from a storage port in integral causality to a storage port in
//            derivative causality (flat topological loop)        index 1
//   class 2  a causal cycle through two or more resistors        index 1
//   class 3  a causal cycle through at most one resistor whose bonds form no
//            loop of the bond graph (out and back along the same bonds)
//                                                                 index 1
//   class 4  a causal cycle through at most one resistor whose bonds contain a
//            loop of the bond graph (a kinematic loop)            index 2
// docs/zcp.md gives the rule and its reasons. The analysis is structural: it
// uses the causal strokes only, never the laws (dependencies hidden in
// modulated sources' expressions and MTF/MGY moduli are not followed).
#pragma once

#include <string>
#include <vector>

#include "paynter/causality.h"
#include "paynter/model.h"

namespace paynter {

struct ZeroOrderPath {
  int cls = 0;                // 1..4
  std::vector<int> elements;  // distinct elements in path order (class 1: integral storage first, derivative last)
  std::vector<int> bonds;     // distinct bonds in path order
  std::string description;    // one line, with the variables in signal order ("f_b2 -> f_b3 -> ...")
  int dae_index = 1;          // 2 for class 4, else 1
  // Set on the last path of a list when the cycle search stopped at its bound:
  // there may be more causal cycles than listed.
  bool truncated = false;
};

// All class-1 paths (one shortest path from each integral storage port to each
// derivative storage port that depends on it), then the causal cycles (classes
// 2-4; an effort cycle and its dual flow cycle over the same bonds count once),
// sorted by class. At most `max_cycles` elementary cycles are enumerated.
// Throws Error if the graph has conflicts or bonds without causality (RCAP).
std::vector<ZeroOrderPath> FindZeroOrderPaths(const Model& model, const CausalGraph& graph, int max_cycles = 1000);

// The class of a causal cycle given its bonds and the elements that compute its
// variables (the rule of the header comment): 2, 3 or 4.
int ClassifyCausalCycle(const Model& model, const std::vector<int>& bonds, const std::vector<int>& elements);

// Text section: each path numbered from 1 (class, elements, bonds, index, the
// causal chain), then "DAE index of the model: N" (the largest index; 0 when
// there is no ZCP and the state equations are an ODE).
std::string ZeroOrderPathReport(const Model& model, const std::vector<ZeroOrderPath>& paths);

// Path number `n` (from 1, as numbered by ZeroOrderPathReport); throws Error
// saying how many there are when out of range.
const ZeroOrderPath& SelectZeroOrderPath(const std::vector<ZeroOrderPath>& paths, int n);

}  // namespace paynter
