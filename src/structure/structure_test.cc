#include "structure.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

namespace paynter::structure {
namespace {

TEST(StronglyConnectedComponents, ChainComesInDependencyOrder) {
  // 2 depends on 1 depends on 0.
  std::vector<std::vector<int>> deps = {{}, {0}, {1}};
  auto comps = StronglyConnectedComponents(deps);
  ASSERT_EQ(comps.size(), 3u);
  EXPECT_EQ(comps[0], std::vector<int>{0});
  EXPECT_EQ(comps[1], std::vector<int>{1});
  EXPECT_EQ(comps[2], std::vector<int>{2});
}

TEST(StronglyConnectedComponents, FindsCycleAsOneComponent) {
  // 0 <- 1 <- 2 <- 1 (cycle 1-2), 3 depends on 2.
  std::vector<std::vector<int>> deps = {{}, {0, 2}, {1}, {2}};
  auto comps = StronglyConnectedComponents(deps);
  ASSERT_EQ(comps.size(), 3u);
  EXPECT_EQ(comps[0], std::vector<int>{0});
  EXPECT_EQ(comps[1], (std::vector<int>{1, 2}));
  EXPECT_EQ(comps[2], std::vector<int>{3});
  EXPECT_FALSE(HasSelfLoop(deps, 1));
}

TEST(Tear, PreferredNodeBreaksTheCycle) {
  // 0 -> 1 -> 2 -> 0 (each depends on the previous).
  std::vector<std::vector<int>> deps = {{2}, {0}, {1}};
  auto t = Tear(deps, {0, 1, 2}, {}, {1});
  EXPECT_EQ(t.tears, std::vector<int>{1});
  EXPECT_EQ(t.ordered, (std::vector<int>{2, 0}));
}

TEST(Tear, GreedyTearingLeavesAnAcyclicRest) {
  // Two interlocked cycles sharing node 0: 0<->1, 0<->2.
  std::vector<std::vector<int>> deps = {{1, 2}, {0}, {0}};
  auto t = Tear(deps, {0, 1, 2}, {}, {});
  EXPECT_EQ(t.tears, std::vector<int>{0});
  EXPECT_EQ(t.ordered.size(), 2u);
}

// The order Tear returns is defined by sweeps: repeatedly, over the remaining
// nodes in ascending order, take each one whose dependencies are taken. This
// is that definition written out directly (a sweep per step of the longest
// chain), to compare Tear's order with on graphs of every shape.
std::vector<int> SweepOrder(const std::vector<std::vector<int>>& deps, const std::set<int>& rest,
                            std::vector<int>* cyclic) {
  std::vector<int> order;
  std::set<int> done;
  bool progress = true;
  while (progress && done.size() < rest.size()) {
    progress = false;
    for (int v : rest) {
      if (done.count(v)) continue;
      bool ready = true;
      for (int w : deps[v])
        if (rest.count(w) && !done.count(w)) ready = false;
      if (ready) {
        order.push_back(v);
        done.insert(v);
        progress = true;
      }
    }
  }
  cyclic->clear();
  for (int v : rest)
    if (!done.count(v)) cyclic->push_back(v);
  return order;
}

Tearing SweepTear(const std::vector<std::vector<int>>& deps, const std::vector<int>& nodes,
                  const std::vector<int>& forced, const std::vector<int>& preferred) {
  std::set<int> torn(forced.begin(), forced.end());
  auto rest = [&] {
    std::set<int> r;
    for (int v : nodes)
      if (!torn.count(v)) r.insert(v);
    return r;
  };
  std::vector<int> cyclic, order;
  for (int p : preferred) {
    order = SweepOrder(deps, rest(), &cyclic);
    if (cyclic.empty()) break;
    if (std::find(cyclic.begin(), cyclic.end(), p) != cyclic.end()) torn.insert(p);
  }
  for (order = SweepOrder(deps, rest(), &cyclic); !cyclic.empty(); order = SweepOrder(deps, rest(), &cyclic)) {
    int best = cyclic.front(), best_score = -1;
    for (int v : cyclic) {
      int score = 0;
      for (int w : cyclic)
        if (std::find(deps[w].begin(), deps[w].end(), v) != deps[w].end()) ++score;
      if (score > best_score) {
        best_score = score;
        best = v;
      }
    }
    torn.insert(best);
  }
  return {std::vector<int>(torn.begin(), torn.end()), order};
}

TEST(Tear, OrderIsThatOfAscendingSweeps) {
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 400; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 30);
    const int degree = static_cast<int>(rng() % 4);
    std::vector<std::vector<int>> deps(n);
    for (int v = 0; v < n; ++v)
      for (int k = static_cast<int>(rng() % (degree + 1)); k > 0; --k) deps[v].push_back(static_cast<int>(rng() % n));
    // Dependencies outside the component (the first few nodes) and repeated ones.
    const int lo = std::min(static_cast<int>(rng() % 3), n - 1);
    std::vector<int> nodes;
    for (int v = lo; v < n; ++v) nodes.push_back(v);
    std::shuffle(nodes.begin(), nodes.end(), rng);
    std::vector<int> forced, preferred;
    for (int v : nodes) {
      if (rng() % 8 == 0) forced.push_back(v);
      if (rng() % 4 == 0) preferred.push_back(v);
    }
    const Tearing want = SweepTear(deps, nodes, forced, preferred);
    const Tearing got = Tear(deps, nodes, forced, preferred);
    EXPECT_EQ(got.tears, want.tears) << "trial " << trial;
    EXPECT_EQ(got.ordered, want.ordered) << "trial " << trial;
  }
}

TEST(Tear, ChainNumberedAgainstItsDependencies) {
  // Node v depends on v + 1: one node per sweep, the order descending (a chain
  // of transformers in derivative causality is numbered so).
  const int n = 2000;
  std::vector<std::vector<int>> deps(n);
  for (int v = 0; v + 1 < n; ++v) deps[v].push_back(v + 1);
  std::vector<int> nodes(n);
  for (int v = 0; v < n; ++v) nodes[v] = v;
  const Tearing t = Tear(deps, nodes, {}, {});
  EXPECT_TRUE(t.tears.empty());
  ASSERT_EQ(t.ordered.size(), static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) ASSERT_EQ(t.ordered[k], n - 1 - k);
}

}  // namespace
}  // namespace paynter::structure

namespace paynter::structure {
namespace {

TEST(ComponentFinder, ComponentOfANodeAmongTheNodesAboveIt) {
  // 0 <-> 1 <-> 2, and 2 -> 3 -> 2: among all nodes, 0's component is all of
  // {0, 1, 2, 3}; among the nodes >= 1, 1's is {1, 2, 3}; among those >= 3, {3}.
  std::vector<std::vector<int>> succ = {{1}, {0, 2}, {1, 3}, {2}};
  ComponentFinder f(succ);
  auto sorted = [](std::vector<int> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(sorted(f.ComponentOf(0, 0)), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(sorted(f.ComponentOf(1, 1)), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(sorted(f.ComponentOf(3, 3)), (std::vector<int>{3}));
}

}  // namespace
}  // namespace paynter::structure
