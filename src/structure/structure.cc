#include "structure.h"

#include <algorithm>
#include <functional>
#include <set>

namespace paynter::structure {

namespace {

// Tarjan's search (1972), iterative, from `root` over the nodes >= min_node
// not yet stamped with `epoch`. Components are emitted when their root
// finishes, after every component they depend on (edges point to dependencies).
template <class Emit>
void TarjanSearch(const std::vector<std::vector<int>>& deps, int root, int min_node, int epoch, std::vector<int>& stamp,
                  std::vector<int>& index, std::vector<int>& low, std::vector<char>& on_stack, std::vector<int>& stack,
                  int& counter, Emit emit) {
  struct Frame {
    int v;
    size_t next;
  };
  std::vector<Frame> call{{root, 0}};
  stamp[root] = epoch;
  index[root] = low[root] = counter++;
  stack.push_back(root);
  on_stack[root] = 1;
  while (!call.empty()) {
    Frame& f = call.back();
    if (f.next < deps[f.v].size()) {
      const int w = deps[f.v][f.next++];
      if (w < min_node) continue;
      if (stamp[w] != epoch) {
        stamp[w] = epoch;
        index[w] = low[w] = counter++;
        stack.push_back(w);
        on_stack[w] = 1;
        call.push_back({w, 0});
      } else if (on_stack[w]) {
        low[f.v] = std::min(low[f.v], index[w]);
      }
      continue;
    }
    const int v = f.v;
    call.pop_back();
    if (!call.empty()) low[call.back().v] = std::min(low[call.back().v], low[v]);
    if (low[v] == index[v]) {
      std::vector<int> comp;
      int w;
      do {
        w = stack.back();
        stack.pop_back();
        on_stack[w] = 0;
        comp.push_back(w);
      } while (w != v);
      emit(std::move(comp));
    }
  }
}

}  // namespace

std::vector<std::vector<int>> StronglyConnectedComponents(const std::vector<std::vector<int>>& deps) {
  const int n = static_cast<int>(deps.size());
  std::vector<int> stamp(n, -1), index(n, 0), low(n, 0), stack;
  std::vector<char> on_stack(n, 0);
  std::vector<std::vector<int>> out;
  int counter = 0;
  for (int root = 0; root < n; ++root) {
    if (stamp[root] == 0) continue;
    TarjanSearch(deps, root, 0, 0, stamp, index, low, on_stack, stack, counter, [&](std::vector<int> comp) {
      std::sort(comp.begin(), comp.end());
      out.push_back(std::move(comp));
    });
  }
  return out;
}

ComponentFinder::ComponentFinder(const std::vector<std::vector<int>>& deps)
    : deps_(deps),
      stamp_(deps.size(), -1),
      index_(deps.size(), 0),
      low_(deps.size(), 0),
      on_stack_(deps.size(), 0) {}

std::vector<int> ComponentFinder::ComponentOf(int s, int min_node) {
  // s's component is the last one its own search emits.
  std::vector<int> last;
  int counter = 0;
  stack_.clear();
  TarjanSearch(deps_, s, min_node, ++epoch_, stamp_, index_, low_, on_stack_, stack_, counter,
               [&](std::vector<int> comp) { last = std::move(comp); });
  return last;
}

bool HasSelfLoop(const std::vector<std::vector<int>>& deps, int v) {
  return std::find(deps[v].begin(), deps[v].end(), v) != deps[v].end();
}

namespace {
// Topological order of `nodes` minus `torn` using only edges inside that set;
// returns false if a cycle remains.
bool Order(const std::vector<std::vector<int>>& deps, const std::vector<int>& nodes, const std::set<int>& torn,
           std::vector<int>* order, std::vector<int>* cyclic) {
  std::set<int> rest;
  for (int v : nodes)
    if (!torn.count(v)) rest.insert(v);
  order->clear();
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
        order->push_back(v);
        done.insert(v);
        progress = true;
      }
    }
  }
  cyclic->clear();
  for (int v : rest)
    if (!done.count(v)) cyclic->push_back(v);
  return cyclic->empty();
}
}  // namespace

Tearing Tear(const std::vector<std::vector<int>>& deps, const std::vector<int>& nodes, const std::vector<int>& forced,
             const std::vector<int>& preferred) {
  std::set<int> torn(forced.begin(), forced.end());
  std::set<int> in(nodes.begin(), nodes.end());
  std::vector<int> order, cyclic;
  // Tear preferred nodes first, but only those that lie on a remaining cycle.
  for (int p : preferred) {
    if (Order(deps, nodes, torn, &order, &cyclic)) break;
    if (std::find(cyclic.begin(), cyclic.end(), p) != cyclic.end()) torn.insert(p);
  }
  while (!Order(deps, nodes, torn, &order, &cyclic)) {
    // Greedy: tear the cyclic node with the most dependents among the cyclic nodes.
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
  Tearing t;
  t.tears.assign(torn.begin(), torn.end());
  t.ordered = order;
  return t;
}

}  // namespace paynter::structure
