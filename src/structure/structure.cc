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
// returns false if a cycle remains (`cyclic`: the nodes that are on a cycle or
// depend on one, ascending).
//
// The order is that of repeated sweeps over the nodes in ascending order, each
// sweep taking every node whose dependencies are already taken (earlier in the
// same sweep included). A node's sweep is therefore
//   sweep(v) = max(1, max over dependencies w < v of sweep(w),
//                     max over dependencies w > v of sweep(w) + 1),
// a longest path that Kahn's algorithm computes in one pass over the edges;
// the order is then (sweep, node). Sweeping itself costs one pass per sweep,
// and a chain whose nodes are numbered against its dependencies (a chain of
// transformers in derivative causality) needs as many sweeps as it has nodes.
bool Order(const std::vector<std::vector<int>>& deps, const std::vector<int>& nodes, const std::set<int>& torn,
           std::vector<int>* order, std::vector<int>* cyclic) {
  std::vector<int> rest;
  rest.reserve(nodes.size());
  for (int v : nodes)
    if (!torn.count(v)) rest.push_back(v);
  std::sort(rest.begin(), rest.end());
  rest.erase(std::unique(rest.begin(), rest.end()), rest.end());
  const int n = static_cast<int>(rest.size());
  auto local = [&](int w) {
    const auto it = std::lower_bound(rest.begin(), rest.end(), w);
    return it != rest.end() && *it == w ? static_cast<int>(it - rest.begin()) : -1;
  };
  // pending[i]: dependencies of rest[i] (with repetitions) not yet taken;
  // dependents of rest[j] listed as [first[j], first[j + 1]) in `users`.
  std::vector<int> pending(n, 0), first(n + 1, 0);
  std::vector<std::pair<int, int>> edges;  // (dependency, dependent), local indices
  for (int i = 0; i < n; ++i)
    for (int w : deps[rest[i]]) {
      const int j = local(w);
      if (j < 0) continue;
      ++pending[i];
      ++first[j + 1];
      edges.push_back({j, i});
    }
  for (int j = 0; j < n; ++j) first[j + 1] += first[j];
  std::vector<int> users(edges.size()), fill(first.begin(), first.end() - 1);
  for (const auto& [j, i] : edges) users[fill[j]++] = i;
  std::vector<int> sweep(n, 1), ready;
  for (int i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push_back(i);
  std::vector<std::pair<int, int>> taken;  // (sweep, node)
  taken.reserve(n);
  std::vector<char> done(n, 0);
  while (!ready.empty()) {
    const int j = ready.back();
    ready.pop_back();
    done[j] = 1;
    taken.push_back({sweep[j], rest[j]});
    for (int k = first[j]; k < first[j + 1]; ++k) {
      const int i = users[k];
      // rest is ascending, so local indices compare as the nodes do.
      sweep[i] = std::max(sweep[i], j < i ? sweep[j] : sweep[j] + 1);
      if (--pending[i] == 0) ready.push_back(i);
    }
  }
  std::sort(taken.begin(), taken.end());
  order->clear();
  for (const auto& t : taken) order->push_back(t.second);
  cyclic->clear();
  for (int i = 0; i < n; ++i)
    if (!done[i]) cyclic->push_back(rest[i]);
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
    if (std::binary_search(cyclic.begin(), cyclic.end(), p)) torn.insert(p);
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
