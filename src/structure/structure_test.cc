#include "structure.h"

#include <gtest/gtest.h>

#include <algorithm>

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
