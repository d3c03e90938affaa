// ExpandVectorBonds: vector bonds and multiport elements -> scalar bonds and
// elements (seed 003 leaves this transformation as future work). Each vector
// bond of dimension n becomes n scalar bonds named <bond>_<c> (c = x, y, z for
// n = 3, else 1..n), each recording the vector bond it came from; a vector
// element becomes its components, and a vector transformer or gyrator its
// coordinate-transformation subsystem: 1-junctions on the side whose flows
// it takes, 0-junctions (TF) or 1-junctions (GY) on the other, one scalar
// (M)TF or (M)GY per non-zero entry of its matrix.
#include <fmt/format.h>

#include <Eigen/Dense>
#include <cmath>
#include <map>
#include <set>

#include "paynter/multibody.h"

namespace paynter {
namespace {


std::string Component(int n, int c) { return n == 3 ? std::string(1, "xyz"[c]) : std::to_string(c + 1); }

// "[a, [b, c]]" -> a tree of texts. Only brackets and commas at depth 0 split.
struct Tree {
  std::string leaf;
  std::vector<Tree> items;
  bool list = false;
};

Tree ParseBrackets(const std::string& text, size_t* pos) {
  Tree t;
  while (*pos < text.size() && text[*pos] == ' ') ++*pos;
  if (*pos < text.size() && text[*pos] == '[') {
    t.list = true;
    ++*pos;
    for (;;) {
      while (*pos < text.size() && text[*pos] == ' ') ++*pos;
      if (*pos < text.size() && text[*pos] == ']') {
        ++*pos;
        break;
      }
      t.items.push_back(ParseBrackets(text, pos));
      while (*pos < text.size() && text[*pos] == ' ') ++*pos;
      if (*pos < text.size() && text[*pos] == ',') ++*pos;
      else if (*pos < text.size() && text[*pos] == ']') {
        ++*pos;
        break;
      } else if (*pos >= text.size()) {
        break;
      }
    }
    return t;
  }
  int depth = 0;
  size_t start = *pos;
  while (*pos < text.size()) {
    const char ch = text[*pos];
    if (ch == '(') ++depth;
    if (ch == ')') --depth;
    if (depth == 0 && (ch == ',' || ch == ']')) break;
    ++*pos;
  }
  t.leaf = text.substr(start, *pos - start);
  while (!t.leaf.empty() && t.leaf.back() == ' ') t.leaf.pop_back();
  return t;
}

// The limits of CheckExpressionText (brackets count as nesting) keep the
// recursion of ParseBrackets shallow.
Tree Parse(const std::string& text, const ModelSpec::ElementSpec& e) {
  CheckExpressionText(text, e.where, e.name, "the law");
  size_t pos = 0;
  return ParseBrackets(text, &pos);
}

class VectorExpander {
 public:
  explicit VectorExpander(ModelSpec* spec) : s_(*spec) {}

  void Run() {
    // Dimensions of elements from their bonds.
    for (auto& b : s_.bonds) {
      if (b.dim < 1)
        ThrowAt(b.where, "", fmt::format("bond '{}' has dimension {}", b.name, b.dim), "1, 3 or 6", std::to_string(b.dim));
      if (b.dim == 1) continue;
      if (b.name.empty()) b.name = fmt::format("vb{}", ++unnamed_);
      for (const std::string* end : {&b.from, &b.to}) {
        auto [it, fresh] = dim_.emplace(*end, b.dim);
        if (!fresh && it->second != b.dim)
          ThrowAt(b.where, *end, fmt::format("element '{}' joins bonds of dimensions {} and {}", *end, it->second, b.dim),
               "every bond of a multiport of the same dimension", "", "split or regroup the bonds");
      }
    }
    if (dim_.empty()) return;
    std::vector<ModelSpec::ElementSpec> elements;
    for (const auto& e : s_.elements) {
      auto it = dim_.find(e.name);
      if (it == dim_.end()) {
        if (e.kind == "EJS") ThrowAt(e.where, e.name, "an EJS takes a vector bond", "a bond with dim: 3", "scalar bonds");
        elements.push_back(e);
        continue;
      }
      Expand(e, it->second, &elements);
    }
    std::vector<ModelSpec::BondSpec> bonds;
    for (const auto& b : s_.bonds) {
      if (b.dim == 1) {
        // A scalar bond may not touch a vector element.
        for (const std::string* end : {&b.from, &b.to})
          if (dim_.count(*end))
            ThrowAt(b.where, *end, fmt::format("a scalar bond joins the {}-dimensional element '{}'", dim_.at(*end), *end),
                 fmt::format("dim: {}", dim_.at(*end)), "dim: 1", "connect a component through a scalar element instead");
        bonds.push_back(b);
        continue;
      }
      for (int c = 0; c < b.dim; ++c) {
        ModelSpec::BondSpec sb;
        sb.name = b.name + "_" + Component(b.dim, c);
        sb.from = Port(b.from, b, c, /*is_from=*/true);
        sb.to = Port(b.to, b, c, /*is_from=*/false);
        sb.where = b.where;
        sb.origin = b.name;
        sb.component = c;
        bonds.push_back(sb);
      }
    }
    bonds.insert(bonds.end(), extra_bonds_.begin(), extra_bonds_.end());
    s_.elements = std::move(elements);
    s_.bonds = std::move(bonds);
  }

 private:
  // The scalar element a component of a vector bond attaches to.
  std::string Port(const std::string& element, const ModelSpec::BondSpec& b, int c, bool is_from) {
    const std::string comp = Component(b.dim, c);
    auto it = two_port_.find(element);
    if (it == two_port_.end()) return element + "_" + comp;
    // Port 1 of a two-port is the bond pointing at it.
    const bool port1 = !is_from;
    return element + (port1 ? "_p1_" : "_p2_") + comp;
  }

  void Add(std::vector<ModelSpec::ElementSpec>* out, const ModelSpec::ElementSpec& from, const std::string& name,
           const std::string& kind, const std::string& key = "", const std::string& law = "",
           const std::string& initial = "", const std::string& fixed = "") {
    ModelSpec::ElementSpec e;
    e.name = name;
    e.kind = kind;
    if (!key.empty()) e.laws.push_back({key, law});
    e.initial = initial;
    e.where = from.where;
    e.origin = from.name;
    e.fixed = fixed;
    // One domain holds for every scalar part; an input source's parts are inputs.
    if (from.domain.size() == 1) e.domain = from.domain;
    e.input = from.input && (kind == "Se" || kind == "Sf" || kind == "MSe" || kind == "MSf");
    out->push_back(e);
  }
  // A bond inside an expanded element (its scalar parts carry the element's
  // name as origin; the bond is no component of a vector bond).
  void Bond(const std::string& from, const std::string& to, const SourceLocation& where) {
    ModelSpec::BondSpec b;
    b.from = from;
    b.to = to;
    b.where = where;
    extra_bonds_.push_back(b);
  }

  // A law given per component: a list of n, or one text for all.
  std::vector<std::string> PerComponent(const ModelSpec::ElementSpec& e, const std::string& text, int n,
                                        const std::string& what) {
    const Tree t = Parse(text, e);
    if (!t.list) return std::vector<std::string>(n, text);
    std::vector<std::string> out;
    if (static_cast<int>(t.items.size()) == n && !t.items[0].list) {
      for (const auto& it : t.items) out.push_back(it.leaf);
      return out;
    }
    // A matrix: diagonal only for fields (an I-field with coupling needs a
    // multiport storage element, which paynter does not model yet).
    if (static_cast<int>(t.items.size()) == n) {
      for (int i = 0; i < n; ++i) {
        if (!t.items[i].list || static_cast<int>(t.items[i].items.size()) != n)
          ThrowAt(e.where, e.name, fmt::format("{} is not an {}x{} matrix", what, n, n), "[[..], [..], [..]]", text);
        for (int j = 0; j < n; ++j)
          if (i != j && t.items[i].items[j].leaf != "0") return {};  // coupled: see CoupledField
        out.push_back(t.items[i].items[i].leaf);
      }
      return out;
    }
    ThrowAt(e.where, e.name, fmt::format("{} has the wrong number of components", what), std::to_string(n),
         std::to_string(t.items.size()));
  }

  std::vector<std::vector<std::string>> Matrix(const ModelSpec::ElementSpec& e, const std::string& text, int n,
                                               bool* cross) {
    *cross = false;
    std::string t = text;
    if (t.rfind("cross(", 0) == 0 && t.back() == ')') {
      // cross([rx, ry, rz]): the matrix of r x (.) ; seed 003's cross-product transformer.
      const Tree r = Parse(t.substr(6, t.size() - 7), e);
      if (n != 3 || !r.list || r.items.size() != 3)
        ThrowAt(e.where, e.name, "cross() takes a 3-vector", "cross([rx, ry, rz]) on 3-dimensional bonds", text);
      const std::string rx = "(" + r.items[0].leaf + ")", ry = "(" + r.items[1].leaf + ")",
                        rz = "(" + r.items[2].leaf + ")";
      *cross = true;
      return {{"0", "-" + rz, ry}, {rz, "0", "-" + rx}, {"-" + ry, rx, "0"}};
    }
    const Tree m = Parse(t, e);
    std::vector<std::vector<std::string>> out(n, std::vector<std::string>(n, "0"));
    if (!m.list) {  // a scalar times the identity
      for (int i = 0; i < n; ++i) out[i][i] = t;
      return out;
    }
    if (static_cast<int>(m.items.size()) != n)
      ThrowAt(e.where, e.name, fmt::format("the ratio is not an {}x{} matrix", n, n), "[[..], [..], [..]]", text);
    for (int i = 0; i < n; ++i) {
      if (!m.items[i].list) {  // a list: a diagonal matrix
        out[i][i] = m.items[i].leaf;
        continue;
      }
      if (static_cast<int>(m.items[i].items.size()) != n)
        ThrowAt(e.where, e.name, fmt::format("row {} of the ratio has the wrong length", i + 1), std::to_string(n),
             std::to_string(m.items[i].items.size()));
      for (int j = 0; j < n; ++j) out[i][j] = m.items[i].items[j].leaf;
    }
    return out;
  }

  static bool IsNumber(const std::string& s) {
    char* end = nullptr;
    std::strtod(s.c_str(), &end);
    return end && *end == '\0' && !s.empty();
  }

  // A field with a coupled (symmetric, constant) matrix M = V D V^T: a
  // transformer to its principal directions (flows g = V^T f, efforts
  // e = V e_g) and a diagonal field D there. Exact for constant matrices, such
  // as an inertia tensor in body axes.
  void CoupledField(const ModelSpec::ElementSpec& e, const std::string& key, const std::string& text, int n,
                    const std::vector<std::string>& initial, std::vector<ModelSpec::ElementSpec>* out) {
    if (e.kind != "I" && e.kind != "C" && e.kind != "R")
      ThrowAt(e.where, e.name, "a coupled matrix needs a field (I, C or R)", "a list of components", text);
    const Tree t = Parse(text, e);
    Eigen::MatrixXd M(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const std::string& x = t.items[i].items[j].leaf;
        if (!IsNumber(x))
          ThrowAt(e.where, e.name, fmt::format("the coupled {} must be numeric", key), "numbers", x,
               "a coupled field is diagonalized once, when the model is built");
        M(i, j) = std::strtod(x.c_str(), nullptr);
      }
    if ((M - M.transpose()).cwiseAbs().maxCoeff() > 1e-12 * (1 + M.cwiseAbs().maxCoeff()))
      ThrowAt(e.where, e.name, fmt::format("the {} matrix is not symmetric", key), "M = M^T", text);
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(M);
    const Eigen::MatrixXd V = eig.eigenvectors();
    const Eigen::VectorXd D = eig.eigenvalues();
    if (D.minCoeff() <= 0)
      ThrowAt(e.where, e.name, fmt::format("the {} matrix is not positive definite", key), "positive eigenvalues",
           fmt::format("smallest {}", D.minCoeff()));
    auto num = [](double x) { return fmt::format("{:.17g}", x); };
    for (int c = 0; c < n; ++c) Add(out, e, e.name + "_" + Component(n, c), "1");
    for (int k = 0; k < n; ++k) {
      const std::string u = fmt::format("{}_u{}", e.name, k + 1);
      Add(out, e, u, "0");
      // Initial state in principal coordinates: V^T times the given components.
      std::string init;
      for (int c = 0; c < n; ++c)
        if (!initial[c].empty() && std::abs(V(c, k)) > 1e-15)
          init += (init.empty() ? "" : " + ") + fmt::format("{}*({})", num(V(c, k)), initial[c]);
      Add(out, e, fmt::format("{}_{}", e.name, k + 1), e.kind, key, num(D(k)), init);
      Bond(u, fmt::format("{}_{}", e.name, k + 1), e.where);
      for (int c = 0; c < n; ++c) {
        if (std::abs(V(c, k)) < 1e-15) continue;
        const std::string tf = fmt::format("{}_t{}{}", e.name, Component(n, c), k + 1);
        Add(out, e, tf, "TF", "ratio", num(V(c, k)));
        Bond(e.name + "_" + Component(n, c), tf, e.where);
        Bond(tf, u, e.where);
      }
    }
  }

  void Expand(const ModelSpec::ElementSpec& e, int n, std::vector<ModelSpec::ElementSpec>* out) {
    const std::string& k = e.kind;
    auto law = [&](size_t i) { return e.laws.size() > i ? e.laws[i] : std::pair<std::string, std::string>{"", ""}; };
    if (k == "0" || k == "1") {
      for (int c = 0; c < n; ++c) Add(out, e, e.name + "_" + Component(n, c), k);
      return;
    }
    if (k == "Se" || k == "Sf" || k == "MSe" || k == "MSf" || k == "I" || k == "C" || k == "R") {
      if (e.laws.size() != 1) ThrowAt(e.where, e.name, "a vector element needs exactly one law", "one law key", "");
      const auto [key, text] = law(0);
      const auto values = PerComponent(e, text, n, "the " + key);
      const auto initial = e.initial.empty() ? std::vector<std::string>(n, "")
                                             : PerComponent(e, e.initial, n, "the initial value");
      if (values.empty()) return CoupledField(e, key, text, n, initial, out);
      for (int c = 0; c < n; ++c) Add(out, e, e.name + "_" + Component(n, c), k, key, values[c], initial[c]);
      return;
    }
    if (k == "TF" || k == "MTF" || k == "GY" || k == "MGY") {
      if (e.laws.size() != 1 || e.laws[0].first != "ratio")
        ThrowAt(e.where, e.name, "a vector transformer or gyrator needs a ratio", "ratio: matrix, list or cross([...])", "");
      bool cross = false;
      const auto M = Matrix(e, e.laws[0].second, n, &cross);
      two_port_.insert(e.name);
      const bool gy = k == "GY" || k == "MGY";
      // Port 1 side: 1-junctions (the flows it takes). Port 2: 0-junctions
      // summing the transformed flows (TF), or 1-junctions (GY).
      for (int c = 0; c < n; ++c) {
        Add(out, e, e.name + "_p1_" + Component(n, c), "1");
        Add(out, e, e.name + "_p2_" + Component(n, c), gy ? "1" : "0");
      }
      const std::string fixed = gy ? "flow-in" : cross ? "flow-in-flow-out" : "";
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          const std::string& r = M[i][j];
          if (r == "0" || r == "-0") continue;
          const std::string name = fmt::format("{}_{}{}", e.name, Component(n, i), Component(n, j));
          const bool constant = IsNumber(r) && k != "MTF" && k != "MGY";
          Add(out, e, name, gy ? (constant ? "GY" : "MGY") : (constant ? "TF" : "MTF"), "ratio", r, "", fixed);
          if (gy) {
            // e1_i = M_ij f2_j, e2_j = M_ij f1_i.
            Bond(e.name + "_p1_" + Component(n, i), name, e.where);
            Bond(name, e.name + "_p2_" + Component(n, j), e.where);
          } else {
            // f2_i = M_ij f1_j, e1_j = M_ij e2_i.
            Bond(e.name + "_p1_" + Component(n, j), name, e.where);
            Bond(name, e.name + "_p2_" + Component(n, i), e.where);
          }
        }
      return;
    }
    if (k == "EJS") {
      // The Euler junction structure on an angular velocity bond: effort
      // w x h, a ring of gyrators modulated by the momentum h (seed 004, Fig. 9.36b).
      if (n != 3) ThrowAt(e.where, e.name, "an EJS is three-dimensional", "dim: 3", std::to_string(n));
      if (e.laws.size() != 1 || e.laws[0].first != "momentum")
        ThrowAt(e.where, e.name, "an EJS needs the angular momentum it is modulated by", "momentum: [hx, hy, hz]", "");
      const auto h = PerComponent(e, e.laws[0].second, 3, "the momentum");
      for (int c = 0; c < 3; ++c) Add(out, e, e.name + "_" + Component(3, c), "1");
      for (int i = 0; i < 3; ++i) {
        const int a = (i + 1) % 3, c = (i + 2) % 3;
        const std::string gy = e.name + "_gy_" + Component(3, i);
        Add(out, e, gy, "MGY", "ratio", h[i]);
        Bond(e.name + "_" + Component(3, a), gy, e.where);
        Bond(gy, e.name + "_" + Component(3, c), e.where);
      }
      return;
    }
    ThrowAt(e.where, e.name, fmt::format("a {} element cannot take vector bonds", k),
         "0, 1, Se, Sf, MSe, MSf, I, C, R, TF, MTF, GY, MGY or EJS", k);
  }

  ModelSpec& s_;
  std::map<std::string, int> dim_;
  std::set<std::string> two_port_;
  std::vector<ModelSpec::BondSpec> extra_bonds_;
  int unnamed_ = 0;
};

}  // namespace

void ExpandVectorBonds(ModelSpec* spec) { VectorExpander(spec).Run(); }

}  // namespace paynter
