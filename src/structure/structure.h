// structure/ — graph algorithms on integers: strongly connected components
// (Tarjan 1972) and a greedy tearing of a cyclic component. No symbolic types here.
#pragma once

#include <vector>

namespace paynter::structure {

// deps[v] lists the nodes v depends on. Returns the strongly connected
// components in dependency order: every node's dependencies are in the same or
// an earlier component.
std::vector<std::vector<int>> StronglyConnectedComponents(const std::vector<std::vector<int>>& deps);

// The strong component of node s in the subgraph of the nodes >= min_node,
// as Johnson's cycle search needs it for each s in turn. The finder keeps its
// workspace, so each call costs only what s reaches.
class ComponentFinder {
 public:
  explicit ComponentFinder(const std::vector<std::vector<int>>& deps);
  std::vector<int> ComponentOf(int s, int min_node);

 private:
  const std::vector<std::vector<int>>& deps_;
  std::vector<int> stamp_, index_, low_, stack_;
  std::vector<char> on_stack_;
  int epoch_ = 0;
};

// True if v depends on itself directly.
bool HasSelfLoop(const std::vector<std::vector<int>>& deps, int v);

// For one cyclic component `nodes`, picks tear nodes so that the remaining
// nodes form an acyclic graph. Nodes in `forced` are always torn; `preferred`
// nodes are torn before others. Returns {tears, others in dependency order}.
struct Tearing {
  std::vector<int> tears;
  std::vector<int> ordered;  // non-tear nodes, each after the nodes it depends on
};
Tearing Tear(const std::vector<std::vector<int>>& deps, const std::vector<int>& nodes, const std::vector<int>& forced,
             const std::vector<int>& preferred);

}  // namespace paynter::structure
