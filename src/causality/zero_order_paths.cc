// Zero-order causal paths (ZCPs), after Felez et al. as summarized in seed 003
// ("Zero-order causal path opening method"). Structural and on integers only:
// the causal signal graph is built from the causal strokes alone, never from
// the laws.
//
// The causal signal graph has two nodes per bond, e_b = 2b and f_b = 2b + 1.
// Each node is computed by exactly one element (e_b by the end that gives the
// effort, f_b by the end that receives it), from the nodes listed in deps:
//   0-junction  strong bond s (the effort comes in): f_s <- f_k, e_k <- e_s
//   1-junction  strong bond s (the flow comes in):   e_s <- e_k, f_k <- f_s
//   TF, MTF     effort in on x, out on y:            e_y <- e_x, f_x <- f_y
//   GY, MGY     both flows in:  e_a <- f_c, e_c <- f_a;  both efforts in: f_c <- e_a, f_a <- e_c
//   R           receives the effort: f <- e;  receives the flow: e <- f
//   sources, storage: no dependency at zero order (a source's output is given;
//   an integral storage element's output comes from its state, a derivative
//   one's from a time derivative; both are a change of integration order).
// Dependencies hidden in expressions (MSe/MSf laws, MTF/MGY moduli) are not
// followed: moduli depend on displacements, which are states.
//
// Class 1: for each derivative storage port, a shortest path (BFS) back from its
// input variable to the output of each integral storage port it reaches.
// Classes 2-4: the elementary cycles of the signal graph (Johnson 1975, bounded),
// classified by ClassifyCausalCycle:
//   two or more distinct R elements on the cycle            -> class 2;
//   else the cycle's bonds contain no loop of the bond graph -> class 3;
//   else (a closed topological loop, a kinematic loop)      -> class 4.
// With scalar elements a causal cycle whose bonds form a tree must turn back at
// two one-ports, and only an R turns a signal back (e <-> f on its own bond), so
// class 3 needs vector bonds or multiport fields; the rule still names it.
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include "paynter/zcp.h"
#include "structure.h"

namespace paynter {

namespace {

int E(int b) { return 2 * b; }
int F(int b) { return 2 * b + 1; }
int BondOf(int node) { return node / 2; }
bool IsFlow(int node) { return node % 2 == 1; }

[[noreturn]] void Internal(const std::string& msg) { throw Error("internal error in the ZCP analysis: " + msg); }

struct SignalGraph {
  std::vector<std::vector<int>> deps;  // deps[v]: the nodes v is computed from
  std::vector<std::vector<int>> succ;  // succ[u]: the nodes computed from u
  std::vector<int> computed_by;        // the element that computes each node
};

SignalGraph BuildSignalGraph(const Model& m, const CausalGraph& g) {
  const int nb = static_cast<int>(m.bonds.size());
  SignalGraph s;
  s.deps.assign(2 * nb, {});
  s.succ.assign(2 * nb, {});
  s.computed_by.assign(2 * nb, -1);
  auto other = [&](int b, int el) { return m.bonds[b].from == el ? m.bonds[b].to : m.bonds[b].from; };
  for (int b = 0; b < nb; ++b) {
    const int recv = g.effort_to[b];
    s.computed_by[F(b)] = recv;
    s.computed_by[E(b)] = other(b, recv);
  }
  auto dep = [&](int v, int u) {
    s.deps[v].push_back(u);
    s.succ[u].push_back(v);
  };
  for (int i = 0; i < static_cast<int>(m.elements.size()); ++i) {
    const Element& el = m.elements[i];
    const auto into = [&](int b) { return g.effort_to[b] == i; };
    if (IsJunction(el.kind)) {
      const bool zero = el.kind == ElementKind::kZero;
      int strong = -1;
      for (int b : el.bonds)
        if (into(b) == zero) strong = b;
      if (strong < 0) Internal("junction " + el.name + " has no strong bond");
      for (int b : el.bonds) {
        if (b == strong) continue;
        if (zero) {
          dep(E(b), E(strong));
          dep(F(strong), F(b));
        } else {
          dep(F(b), F(strong));
          dep(E(strong), E(b));
        }
      }
    } else if (IsTwoPort(el.kind)) {
      if (el.bonds.size() != 2) Internal("two-port " + el.name + " without two bonds");
      const int a = el.bonds[0], c = el.bonds[1];
      if (el.kind == ElementKind::kTF || el.kind == ElementKind::kMTF) {
        const int x = into(a) ? a : c, y = x == a ? c : a;  // effort in on x, out on y
        dep(E(y), E(x));
        dep(F(x), F(y));
      } else if (!into(a)) {  // the gyrator gives both efforts
        dep(E(a), F(c));
        dep(E(c), F(a));
      } else {  // it gives both flows
        dep(F(c), E(a));
        dep(F(a), E(c));
      }
    } else if (el.kind == ElementKind::kR) {
      const int b = el.bonds[0];
      if (into(b)) dep(F(b), E(b));
      else dep(E(b), F(b));
    }
    // Sources and storage elements: ends of causal paths.
  }
  return s;
}

std::string NodeName(const Model& m, int node) { return (IsFlow(node) ? "f_" : "e_") + m.bonds[BondOf(node)].name; }

std::string Chain(const Model& m, const std::vector<int>& nodes, bool closed) {
  std::string s;
  for (int v : nodes) s += (s.empty() ? "" : " -> ") + NodeName(m, v);
  if (closed && !nodes.empty()) s += " -> " + NodeName(m, nodes.front());
  return s;
}

// Distinct items (of 0..universe-1) in first-seen order; Take() returns them
// and resets the list for the next path.
class DistinctList {
 public:
  explicit DistinctList(size_t universe) : mark_(universe, 0) {}
  void Add(int x) {
    if (x < 0 || mark_[x]) return;
    mark_[x] = 1;
    items_.push_back(x);
  }
  std::vector<int> Take() {
    std::vector<int> out;
    out.swap(items_);
    for (int x : out) mark_[x] = 0;
    return out;
  }

 private:
  std::vector<char> mark_;
  std::vector<int> items_;
};

std::string ElementNames(const Model& m, const std::vector<int>& els) {
  std::string s;
  for (int i : els) s += (s.empty() ? "" : ", ") + m.elements[i].name;
  return s;
}

// Johnson's algorithm on one strongly connected graph `succ` (local indices):
// appends its elementary cycles to `cycles`, each as its nodes in signal order
// starting at its smallest node. Returns false if it stopped at `max` cycles.
bool JohnsonCycles(const std::vector<std::vector<int>>& succ, size_t max, std::vector<std::vector<int>>* cycles) {
  const int n = static_cast<int>(succ.size());
  std::vector<char> in_comp(n, 0), blocked(n, 0);
  std::vector<std::vector<int>> B(n);
  auto unblock = [&](int u) {
    std::vector<int> st{u};
    while (!st.empty()) {
      const int x = st.back();
      st.pop_back();
      if (!blocked[x]) continue;
      blocked[x] = 0;
      for (int w : B[x])
        if (blocked[w]) st.push_back(w);
      B[x].clear();
    }
  };
  // The strong component of s in the subgraph of the nodes >= s.
  structure::ComponentFinder finder(succ);
  for (int s = 0; s < n; ++s) {
    const std::vector<int> comp = finder.ComponentOf(s, s);
    const bool self_loop = std::find(succ[s].begin(), succ[s].end(), s) != succ[s].end();
    if (comp.size() == 1 && !self_loop) continue;
    for (int v : comp) {
      in_comp[v] = 1;
      blocked[v] = 0;
      B[v].clear();
    }
    // CIRCUIT(s), iteratively.
    struct Frame {
      int v;
      size_t next;
      bool found;
    };
    std::vector<Frame> frames{{s, 0, false}};
    std::vector<int> path{s};
    blocked[s] = 1;
    while (!frames.empty()) {
      Frame& f = frames.back();
      if (f.next < succ[f.v].size()) {
        const int w = succ[f.v][f.next++];
        if (!in_comp[w]) continue;
        if (w == s) {
          cycles->push_back(path);
          f.found = true;
          if (cycles->size() >= max) return false;
        } else if (!blocked[w]) {
          blocked[w] = 1;
          path.push_back(w);
          frames.push_back({w, 0, false});
        }
        continue;
      }
      const int v = f.v;
      const bool found = f.found;
      if (found) {
        unblock(v);
      } else {
        for (int w : succ[v])
          if (in_comp[w] && std::find(B[w].begin(), B[w].end(), v) == B[w].end()) B[w].push_back(v);
      }
      frames.pop_back();
      path.pop_back();
      if (found && !frames.empty()) frames.back().found = true;
    }
    for (int v : comp) in_comp[v] = 0;
  }
  return true;
}

// The elementary cycles of succ, at most `max`, searched in each strongly
// connected component separately (a cycle never leaves one). Returns false if
// the search stopped at the bound.
bool ElementaryCycles(const std::vector<std::vector<int>>& succ, size_t max, std::vector<std::vector<int>>* cycles) {
  const int n = static_cast<int>(succ.size());
  std::vector<int> local(n, -1);
  for (const auto& comp : structure::StronglyConnectedComponents(succ)) {
    if (comp.size() == 1 && !structure::HasSelfLoop(succ, comp[0])) continue;
    for (size_t k = 0; k < comp.size(); ++k) local[comp[k]] = static_cast<int>(k);
    std::vector<std::vector<int>> lsucc(comp.size());
    for (size_t k = 0; k < comp.size(); ++k)
      for (int w : succ[comp[k]])
        if (local[w] >= 0) lsucc[k].push_back(local[w]);
    std::vector<std::vector<int>> found;
    const bool complete = JohnsonCycles(lsucc, max - cycles->size(), &found);
    for (auto& c : found) {
      for (int& v : c) v = comp[v];  // comp is sorted: the first node stays the smallest
      cycles->push_back(std::move(c));
    }
    for (int v : comp) local[v] = -1;
    if (!complete) return false;
  }
  return true;
}

void RequireCompleteCausality(const Model& m, const CausalGraph& g) {
  RequireNoConflicts(m, g);
  if (g.effort_to.size() != m.bonds.size()) Internal("the causal graph is not of this model");
  int relaxed = 0;
  std::string first;
  for (size_t b = 0; b < m.bonds.size(); ++b)
    if (g.effort_to[b] < 0 && relaxed++ == 0) first = m.bonds[b].name;
  if (relaxed == 0) return;
  ThrowAtBond({}, first,
              fmt::format("zero-order causal paths need a causality on every bond; {} bond(s) have none", relaxed), "",
              "", "use a procedure that assigns every bond (SCAP, HaCAP, LaCAP, LCAP), not RCAP");
}

}  // namespace

int ClassifyCausalCycle(const Model& m, const std::vector<int>& bonds, const std::vector<int>& elements) {
  std::set<int> resistors;
  for (int i : elements)
    if (m.elements[i].kind == ElementKind::kR) resistors.insert(i);
  if (resistors.size() >= 2) return 2;
  // Union-find over the elements: a bond joining two already connected
  // elements closes a loop of the (undirected) bond graph.
  std::vector<int> parent(m.elements.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  std::vector<char> seen(m.bonds.size(), 0);
  for (int b : bonds) {
    if (seen[b]) continue;
    seen[b] = 1;
    const int u = find(m.bonds[b].from), v = find(m.bonds[b].to);
    if (u == v) return 4;
    parent[u] = v;
  }
  return 3;
}

std::vector<ZeroOrderPath> FindZeroOrderPaths(const Model& m, const CausalGraph& g, int max_cycles) {
  RequireCompleteCausality(m, g);
  const SignalGraph sg = BuildSignalGraph(m, g);
  const int n = static_cast<int>(sg.deps.size());
  std::vector<ZeroOrderPath> out;
  DistinctList els(m.elements.size()), bonds(m.bonds.size());

  // Class 1: derivative storage <- ... <- integral storage, shortest by BFS.
  std::vector<int> integral_output(n, -1);  // node -> the integral storage element it is the output of
  for (int i : g.integral_storage) {
    const int b = m.elements[i].bonds[0];
    integral_output[m.elements[i].kind == ElementKind::kI ? F(b) : E(b)] = i;
  }
  for (int d : g.derivative_storage) {
    const Element& del = m.elements[d];
    const int b = del.bonds[0];
    const int input = del.kind == ElementKind::kI ? F(b) : E(b);  // what it is given; its output is a derivative
    std::vector<int> toward(n, -1);  // toward[u]: the next node from u on a shortest path to `input`
    std::vector<char> seen(n, 0);
    std::deque<int> queue{input};
    seen[input] = 1;
    while (!queue.empty()) {
      const int v = queue.front();
      queue.pop_front();
      if (integral_output[v] >= 0) {
        const int s = integral_output[v];
        std::vector<int> nodes;
        for (int u = v; u >= 0; u = toward[u]) nodes.push_back(u);
        ZeroOrderPath p;
        p.cls = 1;
        p.dae_index = 1;
        els.Add(s);
        for (int u : nodes) {
          els.Add(sg.computed_by[u]);
          bonds.Add(BondOf(u));
        }
        els.Add(d);
        p.elements = els.Take();
        p.bonds = bonds.Take();
        const Element& sel = m.elements[s];
        p.description = fmt::format("{} {} in derivative causality is given its {} by the state of {} {} in integral "
                                    "causality, with no integration between: {}",
                                    KindName(del.kind), del.name, IsFlow(input) ? "flow" : "effort",
                                    KindName(sel.kind), sel.name, Chain(m, nodes, false));
        out.push_back(std::move(p));
        continue;  // a path ends at an integral storage port
      }
      for (int u : sg.deps[v]) {
        if (seen[u]) continue;
        seen[u] = 1;
        toward[u] = v;
        queue.push_back(u);
      }
    }
  }

  // Classes 2-4: causal cycles.
  std::vector<std::vector<int>> cycles;
  const bool complete = ElementaryCycles(sg.succ, static_cast<size_t>(std::max(1, max_cycles)), &cycles);
  std::map<std::pair<std::vector<int>, std::vector<int>>, size_t> by_key;  // (bonds, elements) -> index in out
  for (auto& cyc : cycles) {
    // Start the chain at a node an R computes, if any: it reads as "from R ... back to R".
    auto r = std::find_if(cyc.begin(), cyc.end(),
                          [&](int v) { return m.elements[sg.computed_by[v]].kind == ElementKind::kR; });
    if (r != cyc.end()) std::rotate(cyc.begin(), r, cyc.end());
    ZeroOrderPath p;
    for (int v : cyc) {
      els.Add(sg.computed_by[v]);
      bonds.Add(BondOf(v));
    }
    p.elements = els.Take();
    p.bonds = bonds.Take();
    std::vector<int> kb = p.bonds, ke = p.elements;
    std::sort(kb.begin(), kb.end());
    std::sort(ke.begin(), ke.end());
    auto key = std::make_pair(kb, ke);
    if (auto it = by_key.find(key); it != by_key.end()) {
      // The dual cycle (efforts and flows exchanged, opposite direction) over the same bonds: the same ZCP.
      ZeroOrderPath& q = out[it->second];
      if (q.description.find("dual") == std::string::npos)
        q.description += fmt::format("; dual cycle: {}", Chain(m, cyc, true));
      continue;
    }
    p.cls = ClassifyCausalCycle(m, p.bonds, p.elements);
    p.dae_index = p.cls == 4 ? 2 : 1;
    std::vector<int> rs;
    for (int i : p.elements)
      if (m.elements[i].kind == ElementKind::kR) rs.push_back(i);
    const std::string chain = Chain(m, cyc, true);
    switch (p.cls) {
      case 2:
        p.description = fmt::format("algebraic loop through the resistors {} (flat topological loop): {}",
                                    ElementNames(m, rs), chain);
        break;
      case 3:
        p.description = fmt::format("causal cycle out of one port and back along the same bonds (open topological "
                                    "loop): {}", chain);
        break;
      default:
        p.description = fmt::format("causal cycle around a closed loop of the bond graph (a kinematic loop){}: {}",
                                    rs.empty() ? "" : " through the resistor " + ElementNames(m, rs), chain);
        break;
    }
    by_key.emplace(std::move(key), out.size());
    out.push_back(std::move(p));
  }
  std::stable_sort(out.begin(), out.end(), [](const ZeroOrderPath& a, const ZeroOrderPath& b) { return a.cls < b.cls; });
  if (!complete && !out.empty()) out.back().truncated = true;
  return out;
}

std::string ZeroOrderPathReport(const Model& m, const std::vector<ZeroOrderPath>& paths) {
  std::ostringstream os;
  os << "zero-order causal paths (ZCPs): " << (paths.empty() ? "none" : std::to_string(paths.size())) << "\n";
  int index = 0;
  bool truncated = false;
  for (size_t k = 0; k < paths.size(); ++k) {
    const ZeroOrderPath& p = paths[k];
    std::string bonds;
    for (int b : p.bonds) bonds += (bonds.empty() ? "" : ", ") + m.bonds[b].name;
    os << fmt::format("  {}. class {}, DAE index {}: {}\n", k + 1, p.cls, p.dae_index, p.description);
    os << fmt::format("     elements: {}\n", ElementNames(m, p.elements));
    os << fmt::format("     bonds:    {}\n", bonds);
    index = std::max(index, p.dae_index);
    truncated = truncated || p.truncated;
  }
  if (truncated)
    os << "  (the search for causal cycles stopped at its bound: there may be more, of any class)\n";
  // Unknown effort sources (constraint forces, Lagrange multipliers) are not
  // causal paths, but each is an algebraic variable fixed by a velocity
  // constraint: structurally index 2, which the equation builder reduces to 1
  // by differentiating the constraint once.
  const int path_index = index;
  int multipliers = 0;
  for (const auto& e : m.elements)
    if (e.form == LawForm::kConstraint || e.artificial == Artificial::kAES) ++multipliers;
  if (multipliers > 0) {
    os << fmt::format("unknown effort sources (constraint forces, multipliers): {}; each is fixed by a velocity "
                      "constraint (index 2), differentiated once by paynter (index 1)\n",
                      multipliers);
    index = std::max(index, 2);
  }
  os << fmt::format("DAE index of the model: {}\n", index);
  switch (index) {
    case 0: os << "  no zero-order causal path: the state equations are an ODE\n"; break;
    case 1: os << "  index 1 (classes 1-3 only): a BDF solver copes\n"; break;
    default:
      if (path_index >= 2)
        os << "  index 2 (class 4: a causal cycle around a kinematic loop): BDF solvers often fail; open the loop "
              "(break variables, parasitic C/R elements, or a Lagrange formulation)\n";
      else
        os << "  index 2 from the velocity constraints of the unknown effort sources; paynter solves them at "
              "acceleration level, with the accelerations (an index-1 system)\n";
      break;
  }
  return os.str();
}

const ZeroOrderPath& SelectZeroOrderPath(const std::vector<ZeroOrderPath>& paths, int n) {
  if (n >= 1 && n <= static_cast<int>(paths.size())) return paths[n - 1];
  ThrowAt({}, "", fmt::format("there is no zero-order causal path {}", n),
          paths.empty() ? "none: the model has no zero-order causal path"
                        : fmt::format("a path number from 1 to {}", paths.size()),
          std::to_string(n), "'paynter causality FILE' lists the zero-order causal paths with their numbers");
}

}  // namespace paynter
