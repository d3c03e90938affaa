// ExpandMultibody: bodies, joints and loads -> elements, bonds, displacements
// and definitions of a scalar bond graph (see include/paynter/multibody.h).
//
// Expressions are built with GiNaC over symbols named as the model's variables
// and printed back as text, which BuildModel parses like any hand-written law.
#include "paynter/multibody.h"

#include <fmt/format.h>
#include <ginac/ginac.h>

#include <algorithm>
#include <array>
#include <functional>
#include <cmath>
#include <set>
#include <sstream>

namespace paynter {
namespace {

using GiNaC::ex;
using Vec = std::array<ex, 3>;
using Mat = std::array<std::array<ex, 3>, 3>;


std::string Text(const ex& e) {
  std::ostringstream os;
  os << e;
  return os.str();
}

Vec Cross(const Vec& a, const Vec& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
ex Dot(const Vec& a, const Vec& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Vec Mul(const Mat& m, const Vec& v) {
  Vec r;
  for (int i = 0; i < 3; ++i) r[i] = m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2];
  return r;
}
Vec MulT(const Mat& m, const Vec& v) {
  Vec r;
  for (int i = 0; i < 3; ++i) r[i] = m[0][i] * v[0] + m[1][i] * v[1] + m[2][i] * v[2];
  return r;
}
Vec Sub(const Vec& a, const Vec& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Vec Add(const Vec& a, const Vec& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
Mat Identity() {
  Mat m;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) m[i][j] = i == j ? 1 : 0;
  return m;
}

const char* kAxes[3] = {"x", "y", "z"};

struct Body {
  std::string name;
  bool ground = false;
  Mat R;   // R_WB in terms of the orientation states (identity for ground)
  Vec p;   // p_WG symbols (zero for ground)
  Vec v;   // velocity of G (flows of <B>_v*), zero for ground
  Vec w;   // angular velocity in B (flows of <B>_w*)
  Mat R0;  // initial R_WB in terms of parameters
  Vec p0;  // initial p_WG
  SourceLocation where;
  // For initial values derived from joint coordinates (see Propagate):
  ex mass = 0;
  bool principal = true;        // inertia given as [Ixx, Iyy, Izz]
  Vec inertia = {0, 0, 0};      // principal inertias (principal)
  std::array<std::array<double, 3>, 3> V{};  // full tensor: principal axes
  std::array<double, 3> D{};    // full tensor: principal inertias
  Vec v0 = {0, 0, 0}, w0 = {0, 0, 0};
  bool velocity_given = false;  // `velocity` or `angular_velocity` written
};

// A joint as the propagation of initial joint coordinates sees it.
struct JointRecord {
  std::string name, type, coordinate;  // coordinate: <J>_angle / <J>_s ("" for other types)
  size_t b1 = 0, b2 = 0;               // indices into the bodies
  Vec axis, r1;                        // axis (unit, numeric) and point in body 1's frame
  ex q = 0, rate = 0;                  // initial coordinate (offset from the start) and rate
  ex s0 = 0;                           // prismatic: the coordinate of the written poses
  bool has_initial = false;
  SourceLocation where;
};

class Expander {
 public:
  explicit Expander(ModelSpec* spec) : s_(*spec), mb_(spec->multibody) {}

  void Run() {
    const auto& st = mb_.settings;
    for (const auto& [k, f] : st)
      if (k != "gravity" && k != "orientation" && k != "parasitic_stiffness" && k != "parasitic_damping" &&
          k != "assemble")
        ThrowAt(f.where, "", fmt::format("unknown multibody setting '{}'", k),
                "gravity, orientation, assemble, parasitic_stiffness, parasitic_damping, bodies, joints, loads", k);
    if (st.count("assemble")) {
      const auto& f = st.at("assemble");
      if (f.is_list || (f.values[0] != "true" && f.values[0] != "false"))
        ThrowAt(f.where, "", "'assemble' is true or false", "assemble: true", f.is_list ? "a list" : f.values[0],
                "true lets paynter move an inconsistent start onto the joints however far off it is");
      s_.assemble = f.values[0] == "true";
    }
    for (const char* k : {"parasitic_stiffness", "parasitic_damping"})
      if (st.count(k)) {
        if (st.at(k).is_list) ThrowAt(st.at(k).where, "", fmt::format("'{}' is a single value", k), "a number", "a list");
        (std::string(k) == "parasitic_stiffness" ? parasitic_k_ : parasitic_c_) = st.at(k).values[0];
      }
    if (st.count("orientation")) {
      const auto& f = st.at("orientation");
      if (f.is_list || (f.values[0] != "quaternion" && f.values[0] != "cardan"))
        ThrowAt(f.where, "", "unknown orientation representation", "quaternion (the default) or cardan",
             f.values.empty() ? "" : f.values[0], "Cardan angles are singular at beta = +-pi/2; quaternions are not");
      cardan_ = f.values[0] == "cardan";
    }
    gravity_ = {0, 0, 0};
    if (st.count("gravity")) gravity_ = Vector(st.at("gravity"), "", "gravity");
    bodies_.push_back(Ground());
    for (const auto& e : mb_.bodies) AddBody(e);
    for (const auto& e : mb_.joints) AddJoint(e);
    for (const auto& e : mb_.loads) AddLoad(e);
    for (const auto& j : joints_)
      if (j.has_initial) {
        Propagate();
        break;
      }
  }

 private:
  // ---- helpers ----------------------------------------------------------------
  GiNaC::symbol Sym(const std::string& name) {
    auto it = syms_.find(name);
    if (it != syms_.end()) return it->second;
    GiNaC::symbol s(name);
    syms_.emplace(name, s);
    return s;
  }

  // True for a number below zero (a text with parameters is checked by
  // BuildModel, once their values are known).
  static bool Negative(const ex& v) {
    const ex n = GiNaC::evalf(v);
    return GiNaC::is_a<GiNaC::numeric>(n) && GiNaC::ex_to<GiNaC::numeric>(n).is_real() &&
           GiNaC::ex_to<GiNaC::numeric>(n).to_double() < 0;
  }

  // Parses a text with every name a symbol (checked later by BuildModel).
  ex Parse(const std::string& text, const SourceLocation& where, const std::string& who) {
    CheckExpressionText(text, where, who, "the expression");
    try {
      return ParseExpressionText(text, [&](const std::string& name) -> ex {
        return name == "pi" || name == "Pi" ? ex(GiNaC::Pi) : ex(Sym(name));
      });
    } catch (const std::exception&) {
      ThrowAt(where, who, fmt::format("cannot parse '{}'", text), "a number or an expression of parameters");
    }
  }

  const ModelSpec::Field* Get(const ModelSpec::Entry& e, const std::string& key) {
    auto it = e.fields.find(key);
    return it == e.fields.end() ? nullptr : &it->second;
  }

  std::string Name(const ModelSpec::Entry& e, const char* what) {
    const auto* f = Get(e, "name");
    if (!f || f->is_list) ThrowAt(e.where, "", fmt::format("a {} needs a name", what), "name: <identifier>", "none");
    CheckNameLength(f->values[0], f->where, "", fmt::format("the name of a {}", what));
    return f->values[0];
  }

  void CheckKeys(const ModelSpec::Entry& e, const std::string& who, const std::set<std::string>& allowed) {
    for (const auto& [k, f] : e.fields)
      if (!allowed.count(k)) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        ThrowAt(f.where, who, fmt::format("unknown key '{}'", k), "one of: " + list, k);
      }
  }

  Vec Vector(const ModelSpec::Field& f, const std::string& who, const std::string& what) {
    if (!f.is_list || f.values.size() != 3)
      ThrowAt(f.where, who, fmt::format("'{}' is a vector of three components", what), "[x, y, z]",
           f.is_list ? fmt::format("{} components", f.values.size()) : "'" + f.values[0] + "'");
    return {Parse(f.values[0], f.where, who), Parse(f.values[1], f.where, who), Parse(f.values[2], f.where, who)};
  }

  Vec VectorOr(const ModelSpec::Entry& e, const std::string& key, const std::string& who, Vec dflt) {
    const auto* f = Get(e, key);
    return f ? Vector(*f, who, key) : dflt;
  }

  std::string Scalar(const ModelSpec::Entry& e, const std::string& key, const std::string& who) {
    const auto* f = Get(e, key);
    if (!f) return "";
    if (f->is_list) ThrowAt(f->where, who, fmt::format("'{}' is a single value", key), "a number or expression", "a list");
    return f->values[0];
  }

  // A constant unit vector (axes must be numbers).
  std::array<double, 3> Axis(const ModelSpec::Entry& e, const std::string& key, const std::string& who,
                             std::array<double, 3> dflt) {
    const auto* f = Get(e, key);
    if (!f) return dflt;
    const Vec v = Vector(*f, who, key);
    std::array<double, 3> a;
    for (int i = 0; i < 3; ++i) {
      const ex n = GiNaC::evalf(v[i]);
      if (!GiNaC::is_a<GiNaC::numeric>(n))
        ThrowAt(f->where, who, fmt::format("'{}' must be a constant vector", key), "[numbers]", Text(v[i]),
             "joint axes are fixed in the first body's frame");
      a[i] = GiNaC::ex_to<GiNaC::numeric>(n).to_double();
      if (!std::isfinite(a[i]))
        ThrowAt(f->where, who, fmt::format("'{}' has a component that is not a finite number", key),
                "a direction of finite components", f->values[i]);
    }
    // The norm of the components scaled by the largest, so that it does not overflow.
    const double big = std::max({std::abs(a[0]), std::abs(a[1]), std::abs(a[2])});
    const double n = big == 0 ? 0 : big * std::hypot(a[0] / big, a[1] / big, a[2] / big);
    if (n < 1e-12) ThrowAt(f->where, who, fmt::format("'{}' is the zero vector", key), "a direction", "[0, 0, 0]");
    for (double& x : a) x = x / big / (n / big);
    return a;
  }

  void Element(const std::string& name, const std::string& kind, const std::string& key = "",
               const std::string& law = "", const std::string& initial = "") {
    ModelSpec::ElementSpec e;
    e.name = name;
    e.kind = kind;
    if (!key.empty()) e.laws.push_back({key, law});
    e.initial = initial;
    e.where = where_;
    s_.elements.push_back(e);
  }
  void BondTo(const std::string& from, const std::string& to) {
    ModelSpec::BondSpec b;
    b.from = from;
    b.to = to;
    b.where = where_;
    s_.bonds.push_back(b);
  }
  void Define(const std::string& name, const ex& value) { s_.definitions.push_back({name, Text(value), where_}); }
  void Displacement(const std::string& name, const std::string& of, const std::string& rate, const ex& initial) {
    ModelSpec::DisplacementSpec d;
    d.name = name;
    d.of = of;
    d.rate = rate;
    d.initial = Text(initial);
    d.where = where_;
    s_.displacements.push_back(d);
  }

  // ---- bodies -----------------------------------------------------------------
  Body Ground() {
    Body g;
    g.name = "ground";
    g.ground = true;
    g.R = g.R0 = Identity();
    g.p = g.p0 = g.v = g.w = {0, 0, 0};
    return g;
  }

  const Body& FindBody(const std::string& name, const SourceLocation& where, const std::string& who) {
    for (const auto& b : bodies_)
      if (b.name == name) return b;
    std::string list;
    for (const auto& b : bodies_) list += (list.empty() ? "" : ", ") + b.name;
    ThrowAt(where, who, fmt::format("unknown body '{}'", name), "one of: " + list, name);
  }

  // Eigen-decomposition of a symmetric positive definite 3x3 matrix (Jacobi
  // rotations; small and exact enough for an inertia tensor).
  static void Principal(const double J[3][3], std::array<std::array<double, 3>, 3>* V, std::array<double, 3>* D,
                        const SourceLocation& where, const std::string& who) {
    double a[3][3];
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 3; ++k) {
        a[i][k] = J[i][k];
        (*V)[i][k] = i == k ? 1 : 0;
      }
    for (int sweep = 0; sweep < 100; ++sweep) {
      double off = std::abs(a[0][1]) + std::abs(a[0][2]) + std::abs(a[1][2]);
      if (off < 1e-300) break;
      for (int p = 0; p < 2; ++p)
        for (int q = p + 1; q < 3; ++q) {
          if (std::abs(a[p][q]) < 1e-300) continue;
          const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
          const double t = (theta >= 0 ? 1 : -1) / (std::abs(theta) + std::sqrt(theta * theta + 1));
          const double c = 1 / std::sqrt(t * t + 1), s = t * c;
          for (int k = 0; k < 3; ++k) {  // A <- A G
            const double akp = a[k][p], akq = a[k][q];
            a[k][p] = c * akp - s * akq;
            a[k][q] = s * akp + c * akq;
          }
          for (int k = 0; k < 3; ++k) {  // A <- G^T A
            const double apk = a[p][k], aqk = a[q][k];
            a[p][k] = c * apk - s * aqk;
            a[q][k] = s * apk + c * aqk;
          }
          for (int k = 0; k < 3; ++k) {  // V <- V G
            const double vkp = (*V)[k][p], vkq = (*V)[k][q];
            (*V)[k][p] = c * vkp - s * vkq;
            (*V)[k][q] = s * vkp + c * vkq;
          }
        }
    }
    for (int k = 0; k < 3; ++k) {
      (*D)[k] = a[k][k];
      if ((*D)[k] <= 0)
        ThrowAt(where, who, "the inertia tensor is not positive definite", "positive principal inertias",
             fmt::format("{}", (*D)[k]));
    }
  }

  static Mat Cardan(const ex& a, const ex& b, const ex& g) {
    // R = Rx(a) Ry(b) Rz(g) (seed 003, Fig. 3).
    using GiNaC::cos;
    using GiNaC::sin;
    Mat m;
    m[0] = {cos(b) * cos(g), -cos(b) * sin(g), sin(b)};
    m[1] = {cos(g) * sin(a) * sin(b) + cos(a) * sin(g), cos(a) * cos(g) - sin(a) * sin(b) * sin(g), -cos(b) * sin(a)};
    m[2] = {sin(a) * sin(g) - cos(a) * cos(g) * sin(b), cos(g) * sin(a) + cos(a) * sin(b) * sin(g), cos(a) * cos(b)};
    return m;
  }

  void AddBody(const ModelSpec::Entry& e) {
    Body b;
    b.name = Name(e, "body");
    b.where = where_ = e.where;
    CheckKeys(e, b.name, {"name", "mass", "inertia", "position", "orientation", "velocity", "angular_velocity"});
    if (b.name == "ground") ThrowAt(e.where, b.name, "'ground' is the fixed frame's name", "another body name", "ground");
    for (const auto& o : bodies_)
      if (o.name == b.name) ThrowAt(e.where, b.name, fmt::format("duplicate body '{}'", b.name), "each body once", b.name);
    const std::string n = b.name;
    const std::string mass = Scalar(e, "mass", n);
    if (mass.empty()) ThrowAt(e.where, n, "a body needs a mass", "mass: <number or parameter>", "none");
    const auto* inertia = Get(e, "inertia");
    if (!inertia || !inertia->is_list || (inertia->values.size() != 3 && inertia->values.size() != 6))
      ThrowAt(inertia ? inertia->where : e.where, n, "a body needs its central inertia tensor in the body frame",
           "inertia: [Ixx, Iyy, Izz] (principal axes) or [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] (numbers)",
           inertia ? fmt::format("{} values", inertia->values.size()) : "none");
    b.p0 = VectorOr(e, "position", n, {0, 0, 0});
    const Vec ang = VectorOr(e, "orientation", n, {0, 0, 0});
    b.R0 = Cardan(ang[0], ang[1], ang[2]);
    const Vec v0 = VectorOr(e, "velocity", n, {0, 0, 0});
    const Vec w0 = VectorOr(e, "angular_velocity", n, {0, 0, 0});
    const ex m = Parse(mass, e.where, n);
    b.mass = m;
    b.v0 = v0;
    b.w0 = w0;
    b.velocity_given = Get(e, "velocity") || Get(e, "angular_velocity");
    b.principal = inertia->values.size() == 3;
    if (b.principal)
      for (int i = 0; i < 3; ++i) b.inertia[i] = Parse(inertia->values[i], inertia->where, n);
    if (m.is_zero())
      ThrowAt(Get(e, "mass")->where, n, fmt::format("the mass of body '{}' is zero", n), "a nonzero mass",
              fmt::format("mass: {}", mass), "a body's velocity is its momentum divided by its mass");
    if (Negative(m))
      ThrowAt(Get(e, "mass")->where, n, fmt::format("the mass of body '{}' is negative", n), "a positive mass",
              fmt::format("mass: {}", mass));
    // Translation of G, world frame.
    for (int i = 0; i < 3; ++i) {
      const std::string j = fmt::format("{}_v{}", n, kAxes[i]);
      Element(j, "1");
      Element(fmt::format("{}_m{}", n, kAxes[i]), "I", "inertance", mass, Text(m * v0[i]));
      BondTo(j, fmt::format("{}_m{}", n, kAxes[i]));
      // The weight, also when it is zero: it keeps every junction two-bonded
      // for a free body.
      Element(fmt::format("{}_weight_{}", n, kAxes[i]), "Se", "effort", Text(m * gravity_[i]));
      BondTo(fmt::format("{}_weight_{}", n, kAxes[i]), j);
      Displacement(fmt::format("{}_{}", n, kAxes[i]), j, "", b.p0[i]);
      b.p[i] = Sym(fmt::format("{}_{}", n, kAxes[i]));
      b.v[i] = Sym("f_" + j);
    }
    // Rotation, body frame, with the Euler junction structure: a gyrator ring
    // modulated by the angular momenta h = p of the three I elements.
    std::array<std::string, 3> h;  // angular momentum components in B, as texts
    if (inertia->values.size() == 3) {
      for (int i = 0; i < 3; ++i) {
        const std::string j = fmt::format("{}_w{}", n, kAxes[i]);
        Element(j, "1");
        const ex I = Parse(inertia->values[i], inertia->where, n);
        if (I.is_zero())
          ThrowAt(inertia->where, n, fmt::format("the principal inertia I{}{} of body '{}' is zero", kAxes[i], kAxes[i], n),
                  "nonzero principal inertias", fmt::format("inertia: [{}, {}, {}]", inertia->values[0],
                                                            inertia->values[1], inertia->values[2]),
                  "a body's angular velocity is its angular momentum divided by its inertia");
        if (Negative(I))
          ThrowAt(inertia->where, n, fmt::format("the principal inertia I{}{} of body '{}' is negative", kAxes[i], kAxes[i], n),
                  "positive principal inertias", fmt::format("inertia: [{}, {}, {}]", inertia->values[0],
                                                             inertia->values[1], inertia->values[2]));
        Element(fmt::format("{}_J{}", n, kAxes[i]), "I", "inertance", inertia->values[i], Text(I * w0[i]));
        BondTo(j, fmt::format("{}_J{}", n, kAxes[i]));
        b.w[i] = Sym("f_" + j);
        h[i] = fmt::format("p_{}_J{}", n, kAxes[i]);
      }
    } else {
      // A full tensor J = V diag(D) V^T: transformers to the principal axes
      // (flows V^T w) carrying diagonal inertias; h = V pi.
      double J[3][3];
      const int idx[3][3] = {{0, 3, 4}, {3, 1, 5}, {4, 5, 2}};
      for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 3; ++k) {
          const ex v = GiNaC::evalf(Parse(inertia->values[idx[i][k]], inertia->where, n));
          if (!GiNaC::is_a<GiNaC::numeric>(v))
            ThrowAt(inertia->where, n, "a full inertia tensor must be numeric", "numbers", inertia->values[idx[i][k]],
                 "it is diagonalized once, when the model is built");
          J[i][k] = GiNaC::ex_to<GiNaC::numeric>(v).to_double();
        }
      std::array<std::array<double, 3>, 3> V;
      std::array<double, 3> D;
      Principal(J, &V, &D, inertia->where, n);
      b.V = V;
      b.D = D;
      for (int i = 0; i < 3; ++i) {
        Element(fmt::format("{}_w{}", n, kAxes[i]), "1");
        b.w[i] = Sym(fmt::format("f_{}_w{}", n, kAxes[i]));
      }
      for (int k = 0; k < 3; ++k) {
        const std::string u = fmt::format("{}_u{}", n, k + 1), I = fmt::format("{}_J{}", n, k + 1);
        Element(u, "0");
        ex pi0 = 0;  // initial principal momentum D_k (V^T w0)_k
        for (int c = 0; c < 3; ++c) pi0 += D[k] * V[c][k] * w0[c];
        Element(I, "I", "inertance", fmt::format("{:.17g}", D[k]), Text(pi0));
        BondTo(u, I);
        for (int c = 0; c < 3; ++c) {
          if (std::abs(V[c][k]) < 1e-15) continue;
          const std::string tf = fmt::format("{}_t{}{}", n, kAxes[c], k + 1);
          Element(tf, "TF", "ratio", fmt::format("{:.17g}", V[c][k]));
          BondTo(fmt::format("{}_w{}", n, kAxes[c]), tf);
          BondTo(tf, u);
        }
      }
      for (int i = 0; i < 3; ++i) {
        h[i].clear();
        for (int k = 0; k < 3; ++k)
          if (std::abs(V[i][k]) >= 1e-15)
            h[i] += (h[i].empty() ? "" : " + ") + fmt::format("{:.17g}*p_{}_J{}", V[i][k], n, k + 1);
      }
    }
    for (int i = 0; i < 3; ++i) Define(fmt::format("{}_h{}", n, kAxes[i]), Parse(h[i], inertia->where, n));
    // d h_i/dt = T_i - (w x h)_i: MGY h_z from w_x to w_y, h_x from w_y to w_z,
    // h_y from w_z to w_x (seed 004, Fig. 9.36b).
    for (int i = 0; i < 3; ++i) {
      const int a = (i + 1) % 3, c = (i + 2) % 3;  // the gyrator of h_i joins w_a -> w_c
      const std::string gy = fmt::format("{}_ejs_{}", n, kAxes[i]);
      Element(gy, "MGY", "ratio", h[i]);
      BondTo(fmt::format("{}_w{}", n, kAxes[a]), gy);
      BondTo(gy, fmt::format("{}_w{}", n, kAxes[c]));
    }
    // Orientation.
    const std::string wx = "f_" + n + "_wx", wy = "f_" + n + "_wy", wz = "f_" + n + "_wz";
    if (cardan_) {
      const std::string a = n + "_a", bb = n + "_b", g = n + "_g";
      Displacement(a, "", fmt::format("({}*cos({}) - {}*sin({}))/cos({})", wx, g, wy, g, bb), ang[0]);
      Displacement(bb, "", fmt::format("{}*sin({}) + {}*cos({})", wx, g, wy, g), ang[1]);
      Displacement(g, "", fmt::format("{} - ({}*cos({}) - {}*sin({}))*tan({})", wz, wx, g, wy, g, bb), ang[2]);
      b.R = Cardan(Sym(a), Sym(bb), Sym(g));
    } else {
      // q' = q (x) (0, w_B) / 2; R from the normalized quaternion.
      using GiNaC::cos;
      using GiNaC::sin;
      const ex ca = cos(ang[0] / 2), sa = sin(ang[0] / 2), cb = cos(ang[1] / 2), sb = sin(ang[1] / 2),
               cg = cos(ang[2] / 2), sg = sin(ang[2] / 2);
      // q = qx(a) (x) qy(b) (x) qz(g)
      const ex q0i = ca * cb * cg - sa * sb * sg, q1i = sa * cb * cg + ca * sb * sg, q2i = ca * sb * cg - sa * cb * sg,
               q3i = ca * cb * sg + sa * sb * cg;
      const std::string q0 = n + "_q0", q1 = n + "_q1", q2 = n + "_q2", q3 = n + "_q3";
      Displacement(q0, "", fmt::format("-({}*{} + {}*{} + {}*{})/2", q1, wx, q2, wy, q3, wz), q0i);
      Displacement(q1, "", fmt::format("({}*{} + {}*{} - {}*{})/2", q0, wx, q2, wz, q3, wy), q1i);
      Displacement(q2, "", fmt::format("({}*{} + {}*{} - {}*{})/2", q0, wy, q3, wx, q1, wz), q2i);
      Displacement(q3, "", fmt::format("({}*{} + {}*{} - {}*{})/2", q0, wz, q1, wy, q2, wx), q3i);
      const ex a = Sym(q0), x = Sym(q1), y = Sym(q2), z = Sym(q3);
      const ex n2 = a * a + x * x + y * y + z * z;
      Mat R;
      R[0] = {(a * a + x * x - y * y - z * z) / n2, 2 * (x * y - a * z) / n2, 2 * (x * z + a * y) / n2};
      R[1] = {2 * (x * y + a * z) / n2, (a * a - x * x + y * y - z * z) / n2, 2 * (y * z - a * x) / n2};
      R[2] = {2 * (x * z - a * y) / n2, 2 * (y * z + a * x) / n2, (a * a - x * x - y * y + z * z) / n2};
      b.R = R;
    }
    // R_WB as definitions <B>_R11 .. <B>_R33, used below and in outputs.
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        const std::string d = fmt::format("{}_R{}{}", n, i + 1, j + 1);
        Define(d, b.R[i][j]);
        b.R[i][j] = Sym(d);
      }
    bodies_.push_back(b);
  }

  // ---- joints -----------------------------------------------------------------
  // One row: the relative velocity `coefficients . velocities` summed at a
  // 0-junction `row`. Contributions of a body's junctions enter through
  // transformers (MTF when the coefficient varies).
  struct Contribution {
    std::string junction;
    ex coefficient;
  };

  void Row(const std::string& row, const std::vector<Contribution>& parts) {
    Element(row, "0");
    int k = 0;
    for (const auto& c : parts) {
      const ex coef = c.coefficient.expand();
      if (coef.is_zero()) continue;
      const std::string tf = fmt::format("{}_{}", row, ++k);
      bool constant = true;
      for (const auto& [name, sym] : syms_)
        if (coef.has(sym) && name.find('_') != std::string::npos) constant = false;  // model variables have '_'
      Element(tf, constant ? "TF" : "MTF", "ratio", Text(coef));
      BondTo(c.junction, tf);
      BondTo(tf, row);
    }
    if (k == 0) ThrowAt(where_, row, "a joint row with no motion in it", "two bodies that can move relative to each other", "");
  }

  std::vector<Contribution> Translational(const Body& b1, const Body& b2, const Vec& r2, const Vec& d) {
    // u . (v_Q - v_P'), u = R1 d, Q = point of body 2, P' = body 1's material
    // point at Q: exact derivative of u . (p_Q - p_P) (see docs/multibody.md).
    const Vec u = Mul(b1.R, d);
    const Vec pQ = Add(b2.p, Mul(b2.R, r2));
    std::vector<Contribution> parts;
    if (!b2.ground) {
      for (int i = 0; i < 3; ++i) parts.push_back({fmt::format("{}_v{}", b2.name, kAxes[i]), u[i]});
      const Vec c2 = Cross(r2, MulT(b2.R, u));
      for (int i = 0; i < 3; ++i) parts.push_back({fmt::format("{}_w{}", b2.name, kAxes[i]), c2[i]});
    }
    if (!b1.ground) {
      for (int i = 0; i < 3; ++i) parts.push_back({fmt::format("{}_v{}", b1.name, kAxes[i]), -u[i]});
      const Vec r1 = MulT(b1.R, Sub(pQ, b1.p));
      const Vec c1 = Cross(r1, d);
      for (int i = 0; i < 3; ++i) parts.push_back({fmt::format("{}_w{}", b1.name, kAxes[i]), -c1[i]});
    }
    return parts;
  }

  std::vector<Contribution> Rotational(const Body& b1, const Body& b2, const Vec& e) {
    // w . (R2 w2 - R1 w1), w = R1 e (e fixed in body 1).
    std::vector<Contribution> parts;
    if (!b2.ground) {
      const Vec c2 = MulT(b2.R, Mul(b1.R, e));
      for (int i = 0; i < 3; ++i) parts.push_back({fmt::format("{}_w{}", b2.name, kAxes[i]), c2[i]});
    }
    if (!b1.ground)
      for (int i = 0; i < 3; ++i) parts.push_back({fmt::format("{}_w{}", b1.name, kAxes[i]), -e[i]});
    return parts;
  }

  std::vector<Contribution> Universal(const Body& b1, const Body& b2, const Vec& a1, const Vec& a2) {
    // d/dt (R1 a1 . R2 a2) = (w1 - w2) . (R1 a1 x R2 a2) (world angular velocities).
    const Vec n = Cross(Mul(b1.R, a1), Mul(b2.R, a2));
    std::vector<Contribution> parts;
    if (!b2.ground) {
      const Vec c2 = MulT(b2.R, n);
      for (int i = 0; i < 3; ++i) parts.push_back({fmt::format("{}_w{}", b2.name, kAxes[i]), -c2[i]});
    }
    if (!b1.ground) {
      const Vec c1 = MulT(b1.R, n);
      for (int i = 0; i < 3; ++i) parts.push_back({fmt::format("{}_w{}", b1.name, kAxes[i]), c1[i]});
    }
    return parts;
  }

  void AddJoint(const ModelSpec::Entry& e) {
    const std::string J = Name(e, "joint");
    where_ = e.where;
    CheckKeys(e, J, {"name", "type", "body1", "body2", "point1", "point2", "axis", "axis2", "stiffness", "rest",
                     "damping", "actuator", "parasitic_stiffness", "parasitic_damping", "initial"});
    std::string pk = Scalar(e, "parasitic_stiffness", J), pc = Scalar(e, "parasitic_damping", J);
    if (pk.empty()) pk = parasitic_k_;
    if (pc.empty()) pc = parasitic_c_;
    const std::string type = Scalar(e, "type", J);
    static const std::set<std::string> kTypes = {"revolute", "prismatic", "spherical", "cylindrical", "universal",
                                                 "rotational", "planar", "fixed"};
    if (!kTypes.count(type))
      ThrowAt(e.where, J, fmt::format("unknown joint type '{}'", type),
           "revolute, prismatic, spherical, cylindrical, universal, rotational, planar or fixed", type);
    const Body& b1 = FindBody(Scalar(e, "body1", J), e.where, J);
    const Body& b2 = FindBody(Scalar(e, "body2", J), e.where, J);
    if (b1.name == b2.name) ThrowAt(e.where, J, "a joint joins two different bodies", "body1 != body2", b1.name);
    const Vec r1 = VectorOr(e, "point1", J, {0, 0, 0});
    const Vec r2 = VectorOr(e, "point2", J, {0, 0, 0});
    const auto a = Axis(e, "axis", J, {0, 0, 1});
    // Two unit vectors perpendicular to the axis, completing a right-handed basis.
    std::array<double, 3> t = std::abs(a[0]) < 0.9 ? std::array<double, 3>{1, 0, 0} : std::array<double, 3>{0, 1, 0};
    std::array<double, 3> b1v = {a[1] * t[2] - a[2] * t[1], a[2] * t[0] - a[0] * t[2], a[0] * t[1] - a[1] * t[0]};
    const double nb = std::sqrt(b1v[0] * b1v[0] + b1v[1] * b1v[1] + b1v[2] * b1v[2]);
    for (double& x : b1v) x /= nb;
    const std::array<double, 3> b2v = {a[1] * b1v[2] - a[2] * b1v[1], a[2] * b1v[0] - a[0] * b1v[2],
                                       a[0] * b1v[1] - a[1] * b1v[0]};
    auto V = [](const std::array<double, 3>& x) { return Vec{x[0], x[1], x[2]}; };
    const Vec A = V(a), B1 = V(b1v), B2 = V(b2v);
    std::vector<std::reference_wrapper<const Vec>> trans_fixed, rot_fixed, trans_free, rot_free;
    if (type == "revolute") trans_fixed = {A, B1, B2}, rot_fixed = {B1, B2}, rot_free = {A};
    if (type == "prismatic") trans_fixed = {B1, B2}, rot_fixed = {A, B1, B2}, trans_free = {A};
    if (type == "spherical") trans_fixed = {A, B1, B2};
    if (type == "cylindrical") trans_fixed = {B1, B2}, rot_fixed = {B1, B2}, trans_free = {A}, rot_free = {A};
    if (type == "planar") trans_fixed = {A}, rot_fixed = {B1, B2}, trans_free = {B1, B2}, rot_free = {A};
    if (type == "fixed") trans_fixed = {A, B1, B2}, rot_fixed = {A, B1, B2};
    if (type == "universal" || type == "rotational") trans_fixed = {A, B1, B2};

    // Constraint rows with their unknown effort sources (the constraint forces
    // and moments, seed 001).
    Vec F = {0, 0, 0}, T = {0, 0, 0};
    int k = 0;
    // Each row also carries its position-level constraint (`position:`), a
    // function of the poses whose time derivative is the row's flow: what
    // paynter projects onto and assembles with.
    auto constrained = [&](const std::vector<Contribution>& parts, const Vec& world_dir, bool force,
                           const ex& position, const std::string& direction) {
      const std::string row = fmt::format("{}_c{}", J, ++k), src = fmt::format("{}_{}{}", J, force ? "f" : "m", k);
      Row(row, parts);
      Element(src, "Se", "constraint", "0");
      s_.elements.back().position = Text(position);
      s_.elements.back().joint = J;
      s_.elements.back().direction = direction;
      s_.elements.back().parasitic_stiffness = pk;
      s_.elements.back().parasitic_damping = pc;
      BondTo(row, src);
      // The row's effort acts on body 2 as -lambda along the row's direction.
      const ex lambda = Sym("e_" + src);
      for (int i = 0; i < 3; ++i) (force ? F : T)[i] -= lambda * world_dir[i];
    };
    // Position constraints. Translations: u . (p_Q - p_P) with u = R1 d, P the
    // joint point of body 1; its derivative is the row exactly. Rotations: for
    // a direction e fixed in body 1, (R1 a) . (R2 b') with b x a = e and b' the
    // image of b in body 2's frame at the start (R2_0^T R1_0 b); its derivative
    // is the row wherever the joint is assembled, whatever its free motion.
    const Vec pP = Add(b1.p, Mul(b1.R, r1));
    const Vec pQ = Add(b2.p, Mul(b2.R, r2));
    auto image2 = [&](const Vec& x) { return MulT(b2.R0, Mul(b1.R0, x)); };
    const Vec* basis[3] = {&A, &B1, &B2};
    auto which = [&](const Vec& d) {  // d is one of A, B1, B2
      for (int c = 0; c < 3; ++c)
        if (&d == basis[c]) return c;
      return 0;
    };
    auto rot_position = [&](int c) -> ex {
      // (A, B1, B2) is right-handed: A x B1 = B2, B1 x B2 = A, B2 x A = B1.
      if (c == 0) return Dot(Mul(b1.R, B2), Mul(b2.R, image2(B1)));  // b x a = B1 x B2 = A
      if (c == 1) return -Dot(Mul(b1.R, B2), Mul(b2.R, image2(A)));  // A x (-B2) = B1
      return Dot(Mul(b1.R, B1), Mul(b2.R, image2(A)));               // A x B1 = B2
    };
    const char* dir_name[3] = {"axis", "first normal", "second normal"};
    auto describe = [&](int c, const char* what) {
      auto num = [](const ex& v) { return GiNaC::ex_to<GiNaC::numeric>(GiNaC::evalf(v)).to_double(); };
      const Vec& d = *basis[c];
      return fmt::format("{} along the {} [{:.3g}, {:.3g}, {:.3g}] of {}", what, dir_name[c], num(d[0]) + 0.0,
                         num(d[1]) + 0.0, num(d[2]) + 0.0, b1.name);
    };
    for (const Vec& d : trans_fixed)
      constrained(Translational(b1, b2, r2, d), Mul(b1.R, d), true, Dot(Mul(b1.R, d), Sub(pQ, pP)),
                  describe(which(d), "translation"));
    for (const Vec& d : rot_fixed)
      constrained(Rotational(b1, b2, d), Mul(b1.R, d), false, rot_position(which(d)),
                  describe(which(d), "rotation"));
    if (type == "universal" || type == "rotational") {
      const auto a2 = Axis(e, "axis2", J, b1v);
      const Vec A2 = V(a2);
      // axis2 is given in body 2's frame; it starts perpendicular to axis.
      // The row's flow is n . (w1 - w2): body 2 enters along -n.
      const Vec n = Cross(Mul(b1.R, A), Mul(b2.R, A2));
      constrained(Universal(b1, b2, A, A2), {-n[0], -n[1], -n[2]}, false, Dot(Mul(b1.R, A), Mul(b2.R, A2)),
                  fmt::format("axis of {} perpendicular to axis2 of {}", b1.name, b2.name));
    }
    for (int i = 0; i < 3; ++i) {
      Define(fmt::format("{}_F{}", J, kAxes[i]), F[i]);
      Define(fmt::format("{}_T{}", J, kAxes[i]), T[i]);
    }
    // Free rows: the joint coordinate, and its spring, damper and actuator.
    const std::string K = Scalar(e, "stiffness", J), rest = Scalar(e, "rest", J), c = Scalar(e, "damping", J),
                      act = Scalar(e, "actuator", J);
    const size_t nfree = trans_free.size() + rot_free.size();
    if (nfree != 1 && (!K.empty() || !c.empty() || !act.empty()))
      ThrowAt(e.where, J, fmt::format("a {} joint has {} free directions: stiffness, damping and actuator need exactly one",
                                   type, nfree),
           "revolute, prismatic (one free direction)", type, "use loads for the other joint types");
    int f = 0;
    auto free_row = [&](const std::vector<Contribution>& parts, bool translational, const ex& initial) {
      const std::string row = fmt::format("{}_free{}", J, ++f);
      const std::string coord = translational ? (nfree == 1 ? J + "_s" : fmt::format("{}_s{}", J, f))
                                              : (nfree == 1 ? J + "_angle" : fmt::format("{}_angle{}", J, f));
      const std::string rate = coord + "dot";
      if (K.empty() && c.empty() && act.empty()) {
        // Nothing acts along this direction: no junction, only the coordinate
        // (and its rate, as a definition).
        ex r = 0;
        for (const auto& p : parts) r += p.coefficient * Sym("f_" + p.junction);
        Define(rate, r);
        Displacement(coord, "", Text(r), initial);
        return;
      }
      Row(row, parts);
      Element(rate, "1");  // common relative velocity; efforts of spring, damper, actuator add up
      BondTo(row, rate);
      Displacement(coord, rate, "", initial);
      if (!K.empty()) {
        Element(J + "_spring", "C", "effort", fmt::format("({})*({} - ({}))", K, coord, rest.empty() ? "0" : rest),
                "");
        BondTo(rate, J + "_spring");
      }
      if (!c.empty()) {
        Element(J + "_damper", "R", "resistance", c);
        BondTo(rate, J + "_damper");
      }
      if (!act.empty()) {
        Element(J + "_actuator", "MSe", "effort", act);
        BondTo(J + "_actuator", rate);
      }
    };
    // Initial joint coordinates: the translation of Q relative to P along the
    // axis, in body 1's frame, from the initial poses; angles start at 0.
    const Vec pQ0 = Add(b2.p0, Mul(b2.R0, r2));
    const Vec rel0 = Sub(MulT(b1.R0, Sub(pQ0, b1.p0)), r1);
    for (const Vec& d : trans_free) free_row(Translational(b1, b2, r2, d), true, Dot(rel0, d));
    for (const Vec& d : rot_free) free_row(Rotational(b1, b2, d), false, 0);
    // The coordinate of a one-direction joint from the poses (to make it
    // consistent after an assembly): the slide (R1 A).(p_Q - p_P), or the angle
    // atan2((R1 B2).(R2 B1'), (R1 B1).(R2 B1')) from the written start.
    if (nfree == 1 && (type == "revolute" || type == "prismatic")) {
      const std::string coord = type == "revolute" ? J + "_angle" : J + "_s";
      for (auto& d : s_.displacements)
        if (d.name == coord) {
          if (type == "prismatic") {
            d.position = Text(Dot(Mul(b1.R, A), Sub(pQ, pP)));
          } else {
            const Vec b1_2 = Mul(b2.R, image2(B1));
            d.position = Text(GiNaC::atan2(Dot(Mul(b1.R, B2), b1_2), Dot(Mul(b1.R, B1), b1_2)));
            d.period = 2 * M_PI;
          }
        }
    }

    // The joint for the propagation of initial joint coordinates.
    JointRecord rec;
    rec.name = J;
    rec.type = type;
    rec.where = e.where;
    for (size_t i = 0; i < bodies_.size(); ++i) {
      if (bodies_[i].name == b1.name) rec.b1 = i;
      if (bodies_[i].name == b2.name) rec.b2 = i;
    }
    rec.axis = A;
    rec.r1 = r1;
    if (type == "revolute") rec.coordinate = J + "_angle";
    if (type == "prismatic") rec.coordinate = J + "_s", rec.s0 = Dot(rel0, A);
    if (const auto* f = Get(e, "initial")) {
      if (type != "revolute" && type != "prismatic")
        ThrowAt(f->where, J, fmt::format("a {} joint takes no initial coordinate", type),
                "initial: on revolute and prismatic joints", "initial:",
                "give the bodies' positions and velocities instead");
      if (f->is_list && f->values.size() != 2)
        ThrowAt(f->where, J, "'initial' is the joint coordinate, or [coordinate, rate]",
                type == "revolute" ? "initial: angle, or initial: [angle, angular rate]"
                                   : "initial: displacement, or initial: [displacement, rate]",
                fmt::format("{} values", f->values.size()));
      rec.q = Parse(f->values[0], f->where, J);
      if (f->is_list) rec.rate = Parse(f->values[1], f->where, J);
      rec.has_initial = true;
    }
    joints_.push_back(rec);
  }

  // ---- initial joint coordinates ----------------------------------------------
  // When a joint gives `initial:`, the bodies' initial poses and velocities
  // are derived along the tree of joints from the ground (joints taken in the
  // order written; a joint whose body2 is already placed closes a loop and is
  // left to the assembly): each body follows its parent rigidly, then moves by
  // its joint's coordinate (rotation about the axis through point1, or
  // translation along it) and rate. The written poses are those of coordinate
  // 0. Numbers, from the parameters' values.
  void Propagate() {
    GiNaC::exmap values;
    for (const auto& p : s_.parameters) {
      const ex v = GiNaC::evalf(Parse(p.text, p.where, p.name).subs(values));
      values[Sym(p.name)] = v;
    }
    auto num = [&](const ex& e, const SourceLocation& where, const std::string& who) {
      const ex v = GiNaC::evalf(e.subs(values).subs(values));
      if (!GiNaC::is_a<GiNaC::numeric>(v))
        ThrowAt(where, who, "an initial value must be a number", "numbers and parameters", Text(e));
      return GiNaC::ex_to<GiNaC::numeric>(v).to_double();
    };
    using V3 = std::array<double, 3>;
    using M3 = std::array<V3, 3>;
    auto mul = [](const M3& m, const V3& v) {
      V3 r{};
      for (int i = 0; i < 3; ++i) r[i] = m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2];
      return r;
    };
    auto mmul = [](const M3& a, const M3& b) {
      M3 r{};
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) r[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
      return r;
    };
    auto transpose = [](const M3& a) {
      M3 r{};
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) r[i][j] = a[j][i];
      return r;
    };
    auto cross = [](const V3& a, const V3& b) {
      return V3{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
    };
    auto rot = [](const V3& k, double th) {  // Rodrigues
      const double c = std::cos(th), s = std::sin(th), t = 1 - c;
      M3 r{};
      r[0] = {c + k[0] * k[0] * t, k[0] * k[1] * t - k[2] * s, k[0] * k[2] * t + k[1] * s};
      r[1] = {k[1] * k[0] * t + k[2] * s, c + k[1] * k[1] * t, k[1] * k[2] * t - k[0] * s};
      r[2] = {k[2] * k[0] * t - k[1] * s, k[2] * k[1] * t + k[0] * s, c + k[2] * k[2] * t};
      return r;
    };
    const size_t nb = bodies_.size();
    std::vector<V3> pu(nb), p(nb), v(nb), w(nb);  // w: world angular velocity
    std::vector<M3> Ru(nb), R(nb);
    std::vector<char> placed(nb, 0);
    for (size_t b = 0; b < nb; ++b) {
      const Body& B = bodies_[b];
      for (int i = 0; i < 3; ++i) {
        pu[b][i] = num(B.p0[i], B.where, B.name);
        for (int j = 0; j < 3; ++j) Ru[b][i][j] = num(B.R0[i][j], B.where, B.name);
      }
      p[b] = pu[b];
      R[b] = Ru[b];
      V3 vb{}, wb{};
      for (int i = 0; i < 3; ++i) vb[i] = num(B.v0[i], B.where, B.name), wb[i] = num(B.w0[i], B.where, B.name);
      v[b] = vb;
      w[b] = mul(Ru[b], wb);
    }
    placed[0] = 1;  // the ground
    std::vector<double> coordinate(joints_.size(), 0.0);
    std::vector<int> parent_joint(nb, -1);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t k = 0; k < joints_.size(); ++k) {
        const JointRecord& j = joints_[k];
        if (!placed[j.b1] || placed[j.b2]) continue;
        const size_t a = j.b1, c = j.b2;
        if (bodies_[c].velocity_given)
          ThrowAt(j.where, j.name,
                  fmt::format("body '{}' gets its initial pose and velocity from joint '{}' (joints give initial "
                              "coordinates in this model)",
                              bodies_[c].name, j.name),
                  "no 'velocity' or 'angular_velocity' on bodies placed by joints", bodies_[c].name,
                  "give the joint's rate as initial: [coordinate, rate]");
        V3 axis{}, r1{};
        for (int i = 0; i < 3; ++i) axis[i] = num(j.axis[i], j.where, j.name), r1[i] = num(j.r1[i], j.where, j.name);
        const double q = num(j.q, j.where, j.name), qd = num(j.rate, j.where, j.name);
        // Follow the parent: the parent's displacement applied to the child's written pose.
        const M3 Dr = mmul(R[a], transpose(Ru[a]));
        V3 rel{};
        for (int i = 0; i < 3; ++i) rel[i] = pu[c][i] - pu[a][i];
        const V3 moved = mul(Dr, rel);
        M3 Rc = mmul(Dr, Ru[c]);
        V3 pc{};
        for (int i = 0; i < 3; ++i) pc[i] = p[a][i] + moved[i];
        const V3 axis_w = mul(R[a], axis);
        V3 pivot = mul(R[a], r1);
        for (int i = 0; i < 3; ++i) pivot[i] += p[a][i];
        V3 wc = w[a];
        V3 vc = v[a];
        if (j.type == "revolute") {
          const M3 Rq = rot(axis_w, q);
          V3 d{};
          for (int i = 0; i < 3; ++i) d[i] = pc[i] - pivot[i];
          const V3 dr = mul(Rq, d);
          for (int i = 0; i < 3; ++i) pc[i] = pivot[i] + dr[i];
          Rc = mmul(Rq, Rc);
          for (int i = 0; i < 3; ++i) wc[i] += qd * axis_w[i];
        } else if (j.type == "prismatic") {
          for (int i = 0; i < 3; ++i) pc[i] += q * axis_w[i];
        }
        V3 arm{};
        for (int i = 0; i < 3; ++i) arm[i] = pc[i] - p[a][i];
        const V3 wa_arm = cross(w[a], arm);
        for (int i = 0; i < 3; ++i) vc[i] += wa_arm[i];
        if (j.type == "revolute") {
          V3 d{};
          for (int i = 0; i < 3; ++i) d[i] = pc[i] - pivot[i];
          const V3 t = cross(axis_w, d);
          for (int i = 0; i < 3; ++i) vc[i] += qd * t[i];
        } else if (j.type == "prismatic") {
          // The relative velocity along the axis, plus the axis turning with the parent (in arm already).
          for (int i = 0; i < 3; ++i) vc[i] += qd * axis_w[i];
        }
        p[c] = pc;
        R[c] = Rc;
        v[c] = vc;
        w[c] = wc;
        placed[c] = 1;
        parent_joint[c] = static_cast<int>(k);
        coordinate[k] = q;
        changed = true;
      }
    }
    // The bodies on the way from the ground to a joint with initial values
    // keep their poses and velocities when the start is assembled.
    std::vector<char> held(nb, 0);
    for (size_t k = 0; k < joints_.size(); ++k) {
      if (!joints_[k].has_initial || parent_joint[joints_[k].b2] != static_cast<int>(k)) continue;
      for (size_t b = joints_[k].b2; b != 0 && !held[b]; b = joints_[parent_joint[b]].b1) {
        held[b] = 1;
        if (parent_joint[b] < 0) break;
      }
    }
    for (size_t b = 1; b < nb; ++b) {
      if (!held[b]) continue;
      const std::string& n = bodies_[b].name;
      for (int i = 0; i < 3; ++i) {
        s_.assembly_held.push_back(fmt::format("{}_{}", n, kAxes[i]));
        s_.assembly_held.push_back(fmt::format("p_{}_m{}", n, kAxes[i]));
        s_.assembly_held.push_back(bodies_[b].principal ? fmt::format("p_{}_J{}", n, kAxes[i])
                                                        : fmt::format("p_{}_J{}", n, i + 1));
      }
      if (cardan_)
        for (const char* a : {"_a", "_b", "_g"}) s_.assembly_held.push_back(n + a);
      else
        for (int i = 0; i < 4; ++i) s_.assembly_held.push_back(fmt::format("{}_q{}", n, i));
    }
    // Write the initial values back.
    auto set_displacement = [&](const std::string& name, double value) {
      for (auto& d : s_.displacements)
        if (d.name == name) d.initial = fmt::format("{:.17g}", value);
    };
    auto set_momentum = [&](const std::string& name, double value) {
      for (auto& e : s_.elements)
        if (e.name == name) e.initial = fmt::format("{:.17g}", value);
    };
    for (size_t b = 1; b < nb; ++b) {
      if (!placed[b]) continue;
      const Body& B = bodies_[b];
      const std::string& n = B.name;
      for (int i = 0; i < 3; ++i) set_displacement(fmt::format("{}_{}", n, kAxes[i]), p[b][i]);
      const M3& r = R[b];
      if (cardan_) {
        // R = Rx(a) Ry(b) Rz(g): R13 = sin b, R23 = -cos b sin a, R33 = cos a cos b, R12 = -cos b sin g, R11 = cos b cos g.
        set_displacement(n + "_a", std::atan2(-r[1][2], r[2][2]));
        set_displacement(n + "_b", std::asin(std::max(-1.0, std::min(1.0, r[0][2]))));
        set_displacement(n + "_g", std::atan2(-r[0][1], r[0][0]));
      } else {
        // Shepperd's method: the largest of the four squares first.
        const double tr = r[0][0] + r[1][1] + r[2][2];
        double q[4];
        if (tr >= r[0][0] && tr >= r[1][1] && tr >= r[2][2]) {
          const double s4 = 2 * std::sqrt(1 + tr);
          q[0] = s4 / 4, q[1] = (r[2][1] - r[1][2]) / s4, q[2] = (r[0][2] - r[2][0]) / s4, q[3] = (r[1][0] - r[0][1]) / s4;
        } else if (r[0][0] >= r[1][1] && r[0][0] >= r[2][2]) {
          const double s4 = 2 * std::sqrt(1 + r[0][0] - r[1][1] - r[2][2]);
          q[0] = (r[2][1] - r[1][2]) / s4, q[1] = s4 / 4, q[2] = (r[0][1] + r[1][0]) / s4, q[3] = (r[0][2] + r[2][0]) / s4;
        } else if (r[1][1] >= r[2][2]) {
          const double s4 = 2 * std::sqrt(1 + r[1][1] - r[0][0] - r[2][2]);
          q[0] = (r[0][2] - r[2][0]) / s4, q[1] = (r[0][1] + r[1][0]) / s4, q[2] = s4 / 4, q[3] = (r[1][2] + r[2][1]) / s4;
        } else {
          const double s4 = 2 * std::sqrt(1 + r[2][2] - r[0][0] - r[1][1]);
          q[0] = (r[1][0] - r[0][1]) / s4, q[1] = (r[0][2] + r[2][0]) / s4, q[2] = (r[1][2] + r[2][1]) / s4, q[3] = s4 / 4;
        }
        for (int i = 0; i < 4; ++i) set_displacement(fmt::format("{}_q{}", n, i), q[i]);
      }
      const double m = num(B.mass, B.where, n);
      for (int i = 0; i < 3; ++i) set_momentum(fmt::format("{}_m{}", n, kAxes[i]), m * v[b][i]);
      const V3 wb = mul(transpose(r), w[b]);
      if (B.principal) {
        for (int i = 0; i < 3; ++i)
          set_momentum(fmt::format("{}_J{}", n, kAxes[i]), num(B.inertia[i], B.where, n) * wb[i]);
      } else {
        for (int k = 0; k < 3; ++k) {
          double pi = 0;
          for (int c = 0; c < 3; ++c) pi += B.D[k] * B.V[c][k] * wb[c];
          set_momentum(fmt::format("{}_J{}", n, k + 1), pi);
        }
      }
    }
    for (size_t k = 0; k < joints_.size(); ++k) {
      const JointRecord& j = joints_[k];
      if (j.coordinate.empty()) continue;
      const double base = j.type == "prismatic" ? num(j.s0, j.where, j.name) : 0.0;
      set_displacement(j.coordinate, base + num(j.q, j.where, j.name));
    }
  }

  // ---- loads ------------------------------------------------------------------
  // A force with world components F at point r (body frame) of body b: its
  // components on the velocity junctions, its moment r x R^T F on the
  // angular velocity junctions (power F . (v_G + R (w x r))).
  void ApplyForce(const std::string& L, const Body& b, const Vec& r, const Vec& F) {
    if (b.ground) return;
    for (int i = 0; i < 3; ++i)
      if (!F[i].is_zero()) {
        const std::string s = fmt::format("{}_{}_{}", L, b.name, kAxes[i]);
        Element(s, "MSe", "effort", Text(F[i]));
        BondTo(s, fmt::format("{}_v{}", b.name, kAxes[i]));
      }
    const Vec tau = Cross(r, MulT(b.R, F));
    for (int i = 0; i < 3; ++i)
      if (!tau[i].expand().is_zero()) {
        const std::string s = fmt::format("{}_{}_t{}", L, b.name, kAxes[i]);
        Element(s, "MSe", "effort", Text(tau[i]));
        BondTo(s, fmt::format("{}_w{}", b.name, kAxes[i]));
      }
  }

  // A point-to-point spring and damper: force -(K (L - L0) + c dL/dt) e on
  // body2's point, the opposite on body1's, e the unit vector from point1 to point2.
  void AddSpring(const ModelSpec::Entry& e, const std::string& L) {
    CheckKeys(e, L, {"name", "type", "body1", "body2", "point1", "point2", "stiffness", "rest", "damping"});
    const Body& b1 = FindBody(Scalar(e, "body1", L), e.where, L);
    const Body& b2 = FindBody(Scalar(e, "body2", L), e.where, L);
    const Vec r1 = VectorOr(e, "point1", L, {0, 0, 0}), r2 = VectorOr(e, "point2", L, {0, 0, 0});
    const std::string K = Scalar(e, "stiffness", L), rest = Scalar(e, "rest", L), c = Scalar(e, "damping", L);
    if (K.empty() && c.empty()) ThrowAt(e.where, L, "a spring needs a stiffness or a damping", "stiffness: K", "none");
    const Vec P = Add(b1.p, Mul(b1.R, r1)), Q = Add(b2.p, Mul(b2.R, r2));
    auto velocity = [&](const Body& b, const Vec& r) { return Add(b.v, Mul(b.R, Cross(b.w, r))); };
    const Vec d = Sub(Q, P);
    const std::string len = L + "_length";
    Define(len, GiNaC::sqrt(Dot(d, d)));
    const ex l = Sym(len);
    const Vec u = {d[0] / l, d[1] / l, d[2] / l};
    Define(L + "_rate", Dot(u, Sub(velocity(b2, r2), velocity(b1, r1))));
    ex tension = 0;
    if (!K.empty()) tension += Parse(K, e.where, L) * (l - (rest.empty() ? ex(0) : Parse(rest, e.where, L)));
    if (!c.empty()) tension += Parse(c, e.where, L) * Sym(L + "_rate");
    Define(L + "_tension", tension);
    const ex T = Sym(L + "_tension");
    ApplyForce(L, b2, r2, {-T * u[0], -T * u[1], -T * u[2]});
    ApplyForce(L, b1, r1, {T * u[0], T * u[1], T * u[2]});
  }

  void AddLoad(const ModelSpec::Entry& e) {
    const std::string L = Name(e, "load");
    where_ = e.where;
    const std::string type = Scalar(e, "type", L);
    if (type == "spring") return AddSpring(e, L);
    CheckKeys(e, L, {"name", "type", "body", "point", "value"});
    if (type != "force" && type != "torque")
      ThrowAt(e.where, L, fmt::format("unknown load type '{}'", type), "force, torque or spring", type);
    const Body& b = FindBody(Scalar(e, "body", L), e.where, L);
    if (b.ground) ThrowAt(e.where, L, "a load on the ground does nothing", "a moving body", "ground");
    const auto* vf = Get(e, "value");
    if (!vf) ThrowAt(e.where, L, "a load needs a value", "value: [x, y, z] in world components", "none");
    const Vec value = Vector(*vf, L, "value");
    Vec torque_B = {0, 0, 0};
    if (type == "force") {
      for (int i = 0; i < 3; ++i)
        if (!value[i].is_zero()) {
          const std::string s = fmt::format("{}_{}", L, kAxes[i]);
          Element(s, "MSe", "effort", Text(value[i]));
          BondTo(s, fmt::format("{}_v{}", b.name, kAxes[i]));
        }
      torque_B = Cross(VectorOr(e, "point", L, {0, 0, 0}), MulT(b.R, value));
    } else {
      torque_B = MulT(b.R, value);
    }
    for (int i = 0; i < 3; ++i)
      if (!torque_B[i].expand().is_zero()) {
        const std::string s = fmt::format("{}_t{}", L, kAxes[i]);
        Element(s, "MSe", "effort", Text(torque_B[i]));
        BondTo(s, fmt::format("{}_w{}", b.name, kAxes[i]));
      }
  }

  ModelSpec& s_;
  const ModelSpec::MultibodySpec& mb_;
  bool cardan_ = false;
  std::string parasitic_k_, parasitic_c_;  // model-wide parasitic stiffness and damping (texts)
  Vec gravity_;
  std::vector<Body> bodies_;
  std::vector<JointRecord> joints_;
  std::map<std::string, GiNaC::symbol> syms_;
  SourceLocation where_;
};

}  // namespace

void ExpandMultibody(ModelSpec* spec) { Expander(spec).Run(); }

}  // namespace paynter
