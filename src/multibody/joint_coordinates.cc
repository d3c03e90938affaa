// The multibody expansion in joint coordinates, for Lagrange's equations
// (`--form lagrange1|lagrange2` on a model with a `multibody:` section; see
// include/paynter/multibody.h and docs/multibody.md, "Lagrange and Hamilton forms").
//
// The Newton–Euler expansion (multibody.cc and its steps) is run first; this
// file then rewrites its result. The joints of a spanning tree from the ground
// lose their constraint rows: each of their free directions becomes a
// generalized 1-junction whose flow is the joint's rate (the joint's spring,
// damper and actuator stay on it). Each body keeps its velocity junctions,
// inertias, Euler junction structure and loads, but the flow of each junction
// is now the sum, at a 0-junction, of transformers from the joint rates: the
// columns of the body's Jacobian (the first level of transformers of seed
// 003, Fig. 14). Poses become definitions, functions of the joint
// coordinates by forward kinematics. LaCAP then puts every inertia in
// derivative causality, and the chain rule carries the inertias onto the
// joint coordinates: the virtual inertia sum T^T I T and the gyristor
// sum T^T I dT/dt of seed 003, eqs. 12-13, formed by the equation builder.
//
// A joint that closes a loop is an error (lagrange2), or keeps its
// constraint rows, now in joint coordinates, as the multipliers of
// Lagrange's equations of the first kind (lagrange1).
#include <fmt/format.h>
#include <ginac/ginac.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <string_view>

#include "joints.h"
#include "paynter/multibody.h"
#include "vec3.h"

namespace paynter {
namespace multibody {
namespace {

// The joint types (joints.h) whose every direction is a row, constrained or
// free, and whose free directions are all about or along the axis: one
// coordinate each, in the Newton–Euler expansion's names. (A spherical
// joint's rotations have no rows; a planar joint slides across its axis.)
bool TypeHasJointCoordinates(const JointType& t) {
  if (t.axis2_row) return false;
  if (t.constrained_translations.size() + t.free_translations.size() != 3 ||
      t.constrained_rotations.size() + t.free_rotations.size() != 3)
    return false;
  for (const auto* dirs : {&t.free_translations, &t.free_rotations})
    for (Direction d : *dirs)
      if (d != Direction::kAxis) return false;
  return true;
}

// A spherical joint's coordinates are the Cardan angles of body2 relative to
// body1 (R_rel = Rx(angle1) Ry(angle2) Rz(angle3), about body1's axes).
bool IsSpherical(const JointType& t) { return std::string_view(t.name) == "spherical"; }
bool TypeHasCoordinatesHere(const JointType& t) { return TypeHasJointCoordinates(t) || IsSpherical(t); }

bool HasJointCoordinates(const std::string& type) {
  const JointType* t = FindJointType(type);
  return t && TypeHasCoordinatesHere(*t);
}

struct BodyInfo {
  std::string name;
  Mat Ru;  // written R_WB (Cardan angles of `orientation`)
  Vec pu;  // written p_WG
  bool velocity_given = false;
  Vec v0, w0;  // written velocity (world) and angular velocity (body frame)
  bool has_v0 = false, has_w0 = false;
  SourceLocation where;
  // Forward kinematics, filled along the tree:
  int parent_joint = -1;  // the tree joint that places it (-1: ground or not placed)
  bool placed = false;
  Mat R;  // R_WB as symbols of its definitions
  Vec p;  // p_WG as symbols of its definitions
};

struct JointInfo {
  std::string name, type;
  int b1 = 0, b2 = 0;  // body indices (0 = ground)
  Vec axis, r1, r2;    // unit axis in body 1's frame, points
  SourceLocation where;
  bool tree = false, reversed = false;  // reversed: body2 placed first, body1 follows
  std::string angle, slide;             // coordinate names ("" when the joint has none)
  ex rate = 0;                          // initial rate (of the one coordinate)
  bool has_rate = false;
  bool has_initial = false;
  // A spherical joint: its three Cardan angles, and whether its
  // quasi-velocities (the Boltzmann-Hamel form) are the components of the
  // relative angular velocity along body2's axes (else the angles' rates).
  bool spherical = false;
  std::vector<std::string> angles;
  bool body_quasi = true;
};

// One free motion of a tree joint on the rewritten graph: the junction whose
// flow drives it and, for a rotation, the world axis (for a slide, the
// direction). `key` names its transformers (<B>_vx_<key>): the coordinate
// for a coordinate's rate, the junction for a quasi-velocity.
struct Motion {
  std::string key, junction;
  bool rotation = true;
  Vec axis;           // world components
  int body_axis = -1; // 0..2: the axis is body2's own (quasi-velocities), else -1
};

class JointCoordinateExpander {
 public:
  JointCoordinateExpander(ModelSpec* spec, const ModelSpec::MultibodySpec& mb, bool cut_joints, bool hamilton = false,
                          bool boltzmann_hamel = false)
      : s_(*spec), mb_(mb), cut_joints_(cut_joints), hamilton_(hamilton), bh_(boltzmann_hamel) {}

  void Run() {
    for (const auto& p : s_.parameters) parameters_.insert(p.name);
    ReadBodies();
    ReadJoints();
    BuildTree();
    Rewrite();
  }

 private:
  ex Parse(const std::string& text) {
    return ParseExpressionText(text, [&](const std::string& name) -> ex {
      return name == "pi" || name == "Pi" ? ex(GiNaC::Pi) : ex(Sym(name));
    });
  }
  // The parameters' numbers, by symbol (ExpandMultibody has checked that they are).
  const GiNaC::exmap& ParameterValues() {
    if (values_.empty())
      for (const auto& p : s_.parameters) values_[Sym(p.name)] = GiNaC::evalf(Parse(p.text).subs(values_));
    return values_;
  }
  // An expression the expansion handed over, in this pass's own symbols.
  ex Adopt(const ex& e) {
    GiNaC::exmap m;
    for (auto it = e.preorder_begin(); it != e.preorder_end(); ++it)
      if (GiNaC::is_a<GiNaC::symbol>(*it)) m[*it] = Sym(GiNaC::ex_to<GiNaC::symbol>(*it).get_name());
    return m.empty() ? e : e.subs(m);
  }
  GiNaC::symbol Sym(const std::string& name) {
    auto it = syms_.find(name);
    if (it != syms_.end()) return it->second;
    GiNaC::symbol s(name);
    syms_.emplace(name, s);
    return s;
  }
  const ModelSpec::Field* Get(const ModelSpec::Entry& e, const std::string& key) {
    auto it = e.fields.find(key);
    return it == e.fields.end() ? nullptr : &it->second;
  }
  std::string Scalar(const ModelSpec::Entry& e, const std::string& key) {
    const auto* f = Get(e, key);
    return f && !f->values.empty() ? f->values[0] : "";
  }
  Vec VectorOr(const ModelSpec::Entry& e, const std::string& key, Vec dflt) {
    const auto* f = Get(e, key);
    if (!f || f->values.size() != 3) return dflt;
    return {Parse(f->values[0]), Parse(f->values[1]), Parse(f->values[2])};
  }

  static Mat Cardan(const ex& a, const ex& b, const ex& g) {
    // R = Rx(a) Ry(b) Rz(g), as bodies.cc writes a body's `orientation`.
    using GiNaC::cos;
    using GiNaC::sin;
    Mat m;
    m[0] = {cos(b) * cos(g), -cos(b) * sin(g), sin(b)};
    m[1] = {cos(g) * sin(a) * sin(b) + cos(a) * sin(g), cos(a) * cos(g) - sin(a) * sin(b) * sin(g), -cos(b) * sin(a)};
    m[2] = {sin(a) * sin(g) - cos(a) * cos(g) * sin(b), cos(g) * sin(a) + cos(a) * sin(b) * sin(g), cos(a) * cos(b)};
    return m;
  }
  // Rotation by `th` about the unit vector k (Rodrigues).
  static Mat Rot(const Vec& k, const ex& th) {
    const ex c = GiNaC::cos(th), s = GiNaC::sin(th), t = 1 - c;
    Mat r;
    r[0] = {c + k[0] * k[0] * t, k[0] * k[1] * t - k[2] * s, k[0] * k[2] * t + k[1] * s};
    r[1] = {k[1] * k[0] * t + k[2] * s, c + k[1] * k[1] * t, k[1] * k[2] * t - k[0] * s};
    r[2] = {k[2] * k[0] * t - k[1] * s, k[2] * k[1] * t + k[0] * s, c + k[2] * k[2] * t};
    return r;
  }
  static Mat MatMul(const Mat& a, const Mat& b) {
    Mat r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
    return r;
  }
  static Mat Transpose(const Mat& a) {
    Mat r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r[i][j] = a[j][i];
    return r;
  }

  void ReadBodies() {
    BodyInfo g;
    g.name = "ground";
    g.Ru = g.R = Identity();
    g.pu = g.p = {0, 0, 0};
    g.placed = true;
    bodies_.push_back(g);
    for (const auto& e : mb_.bodies) {
      BodyInfo b;
      b.name = Scalar(e, "name");
      b.where = e.where;
      b.pu = VectorOr(e, "position", {0, 0, 0});
      const Vec ang = VectorOr(e, "orientation", {0, 0, 0});
      b.Ru = Cardan(ang[0], ang[1], ang[2]);
      b.velocity_given = Get(e, "velocity") || Get(e, "angular_velocity");
      b.has_v0 = Get(e, "velocity"), b.has_w0 = Get(e, "angular_velocity");
      b.v0 = VectorOr(e, "velocity", {0, 0, 0});
      b.w0 = VectorOr(e, "angular_velocity", {0, 0, 0});
      bodies_.push_back(b);
    }
  }

  int BodyIndex(const std::string& name) const {
    for (size_t i = 0; i < bodies_.size(); ++i)
      if (bodies_[i].name == name) return static_cast<int>(i);
    return -1;  // ExpandMultibody has already rejected unknown bodies
  }

  void ReadJoints() {
    for (const auto& e : mb_.joints) {
      JointInfo j;
      j.name = Scalar(e, "name");
      j.type = Scalar(e, "type");
      j.where = e.where;
      j.b1 = BodyIndex(Scalar(e, "body1"));
      j.b2 = BodyIndex(Scalar(e, "body2"));
      j.r1 = VectorOr(e, "point1", {0, 0, 0});
      j.r2 = VectorOr(e, "point2", {0, 0, 0});
      // The axis as joints.cc reads it: constant (parameters by their values), normalized.
      const Vec a = VectorOr(e, "axis", {0, 0, 1});
      double n = 0, v[3];
      for (int i = 0; i < 3; ++i) {
        ex x = GiNaC::evalf(a[i]);
        if (!GiNaC::is_a<GiNaC::numeric>(x)) x = GiNaC::evalf(a[i].subs(ParameterValues()));
        v[i] = GiNaC::ex_to<GiNaC::numeric>(x).to_double();
        n += v[i] * v[i];
      }
      n = std::sqrt(n);
      j.axis = {v[0] / n, v[1] / n, v[2] / n};
      // The coordinates as joints.cc names them: <J>_s / <J>_angle for one
      // free direction, else numbered, translations first.
      if (j.type == "spherical") {
        j.spherical = true;
        for (int k = 1; k <= 3; ++k) j.angles.push_back(fmt::format("{}_angle{}", j.name, k));
        j.body_quasi = Scalar(e, "quasi_velocities") != "rates";
      } else if (const JointType* t = FindJointType(j.type); t && HasJointCoordinates(j.type)) {
        const bool one = t->FreeCount() == 1;
        if (!t->free_translations.empty()) j.slide = j.name + (one ? "_s" : "_s1");
        if (!t->free_rotations.empty())
          j.angle = j.name + (one ? "_angle" : fmt::format("_angle{}", t->free_translations.size() + 1));
      }
      if (const auto* f = Get(e, "initial")) {
        j.has_initial = true;
        if (f->is_list && f->values.size() == 2) {
          j.rate = Parse(f->values[1]);
          j.has_rate = true;
        }
      }
      joints_.push_back(j);
    }
  }

  // The joints on the tree path from body b to the ground.
  std::vector<int> PathToGround(int b) const {
    std::vector<int> path;
    while (b != 0 && bodies_[b].parent_joint >= 0) {
      const int j = bodies_[b].parent_joint;
      path.push_back(j);
      b = joints_[j].reversed ? joints_[j].b2 : joints_[j].b1;
    }
    return path;
  }

  // A spanning tree of the joints from the ground, in the order written (as
  // the initial joint coordinates are propagated, initial_coordinates.cc).
  void BuildTree() {
    const std::string hint =
        "simulate with --form state (the default: joints as constraint forces), or --constraints "
        "minimal-coordinates for the motion in independent coordinates";
    const std::string equations = hamilton_ ? "Hamilton's equations"
                                  : bh_     ? "the Boltzmann-Hamel equations"
                                            : "Lagrange's equations";
    const std::string loop_hint =
        "--form lagrange1 or hamilton keeps the joint that closes the loop as constraint forces (multipliers); or "
        "simulate with --form state, or --constraints minimal-coordinates for the motion in independent coordinates";
    // Joints with coordinates first: under lagrange1 a joint without them
    // (universal, rotational, ...) may still close a loop.
    for (int pass = 0; pass < 2; ++pass)
      for (bool changed = true; changed;) {
        changed = false;
        for (size_t k = 0; k < joints_.size(); ++k) {
          JointInfo& j = joints_[k];
          if (j.tree || bodies_[j.b1].placed == bodies_[j.b2].placed) continue;
          if (pass == 0 && !HasJointCoordinates(j.type)) continue;
          j.tree = true;
          j.reversed = bodies_[j.b2].placed;
          const int child = j.reversed ? j.b1 : j.b2;
          bodies_[child].placed = true;
          bodies_[child].parent_joint = static_cast<int>(k);
          changed = true;
        }
      }
    for (size_t b = 1; b < bodies_.size(); ++b)
      if (!bodies_[b].placed)
        ThrowAt(bodies_[b].where, bodies_[b].name,
                fmt::format("body '{}' is not joined to the ground by joints: a free body has no joint coordinates for "
                            "{}",
                            bodies_[b].name, equations),
                "every body on a chain of joints from the ground", "a body without a joint path to the ground", hint);
    for (const auto& j : joints_)
      if (j.tree && !HasJointCoordinates(j.type))
        ThrowAt(j.where, j.name,
                fmt::format("joint '{}' is {}: its free motion has no joint coordinates for {} yet", j.name, j.type,
                            equations),
                JointTypeNames(TypeHasCoordinatesHere, " or ") + " joints (one coordinate per free direction)", j.type,
                hint);
    for (size_t k = 0; k < joints_.size() && !cut_joints_; ++k) {
      const JointInfo& j = joints_[k];
      if (j.tree) continue;
      // A joint between two bodies already placed closes a loop: name the loop.
      std::vector<int> a = PathToGround(j.b1), c = PathToGround(j.b2);
      while (!a.empty() && !c.empty() && a.back() == c.back()) a.pop_back(), c.pop_back();
      std::vector<std::string> names;
      for (int i : a) names.push_back(joints_[i].name);
      for (auto it = c.rbegin(); it != c.rend(); ++it) names.push_back(joints_[*it].name);
      names.push_back(j.name);
      ThrowAt(j.where, j.name,
              fmt::format("joint '{}' closes the kinematic loop {}: {} in joint coordinates are formed "
                          "for open chains (trees of joints) only",
                          j.name, fmt::format("{}", fmt::join(names, " - ")), equations),
              "an open chain: every joint joins a body to the chain from the ground",
              fmt::format("a closed chain of {} joints", names.size()), loop_hint);
    }
    for (size_t b = 1; b < bodies_.size(); ++b)
      if (bodies_[b].velocity_given && !SphericalStart(static_cast<int>(b)))
        ThrowAt(bodies_[b].where, bodies_[b].name,
                fmt::format("body '{}' gives its own velocity: in joint coordinates the bodies' velocities follow from "
                            "the joints' rates",
                            bodies_[b].name),
                "no 'velocity' or 'angular_velocity' on bodies", "velocity or angular_velocity",
                fmt::format("give the rate of joint '{}' as initial: [coordinate, rate]",
                            joints_[bodies_[b].parent_joint].name));
  }

  // A body on a spherical joint to the ground may give its angular velocity
  // (body frame): it is the joint's initial quasi-velocity. A velocity it
  // gives must be the one the joint allows, w x (p_G - P).
  bool SphericalStart(int b) {
    const BodyInfo& B = bodies_[b];
    const JointInfo& j = joints_[B.parent_joint];
    if (!j.spherical || j.reversed || j.b1 != 0) return false;
    const Vec w = Mul(B.Ru, B.w0);  // world
    const Vec v = Cross(w, Sub(B.pu, j.r1));
    auto num = [&](const ex& e) {
      const ex x = GiNaC::evalf(e.subs(ParameterValues()).subs(ParameterValues()));
      return GiNaC::is_a<GiNaC::numeric>(x) ? GiNaC::ex_to<GiNaC::numeric>(x).to_double() : NAN;
    };
    for (int i = 0; i < 3; ++i) {
      const double d = num(v[i] - B.v0[i]);
      if (!(std::abs(d) <= 1e-9 * (1 + std::abs(num(v[i])))))
        ThrowAt(B.where, B.name,
                fmt::format("body '{}' gives a velocity that its spherical joint '{}' does not allow", B.name, j.name),
                "velocity = angular_velocity x (position - joint point), in world components",
                fmt::format("velocity component {} off by {}", kAxes[i], d),
                "give the angular velocity alone: the velocity follows from the joint");
    }
    return true;
  }

  bool IsConstant(const ex& e) {
    for (const auto& [name, sym] : syms_)
      if (e.has(sym) && !parameters_.count(name)) return false;
    return true;
  }

  // Replaces the identifier `from` by `to` (a name or "0") in every expression of the spec,
  // texts and the expressions the expansion hands over as they are.
  void RenameVariable(const std::string& from, const std::string& to) {
    const std::regex re("\\b" + from + "\\b");
    auto fix = [&](std::string& text) { text = std::regex_replace(text, re, to); };
    // `to` is a name, or "0" (a dropped row's effort).
    const ex renamed = to == "0" ? ex(0) : ex(GiNaC::symbol(to));
    auto fix_ex = [&](auto& value) {
      if (!value) return;
      GiNaC::exmap m;
      for (auto it = value->preorder_begin(); it != value->preorder_end(); ++it)
        if (GiNaC::is_a<GiNaC::symbol>(*it) && GiNaC::ex_to<GiNaC::symbol>(*it).get_name() == from) m[*it] = renamed;
      if (!m.empty()) *value = value->subs(m);
    };
    for (auto& d : s_.definitions) fix(d.text), fix_ex(d.value), fix_ex(d.rate);
    for (auto& o : s_.outputs) fix(o.text), fix_ex(o.value);
    for (auto& d : s_.displacements) fix(d.rate), fix(d.position), fix_ex(d.rate_value), fix_ex(d.position_value);
    for (auto& e : s_.elements) {
      for (auto& law : e.laws) fix(law.second);
      fix(e.position);
      fix_ex(e.law_value), fix_ex(e.position_value);
    }
  }

  void Rewrite() {
    // 1. The tree joints' rows go; their free directions become generalized
    //    1-junctions.
    std::set<std::string> removed;
    for (const auto& j : joints_) {
      if (!j.tree) continue;
      const std::regex row("^" + j.name + "_(c[0-9]+(_[0-9]+)?|f[0-9]+|m[0-9]+|free[0-9]+(_[0-9]+)?)$");
      for (const auto& e : s_.elements)
        if (std::regex_match(e.name, row)) removed.insert(e.name);
      for (const char* a : {"x", "y", "z"})
        for (const char* k : {"F", "T"}) removed_definitions_.insert(fmt::format("{}_{}{}", j.name, k, a));
    }
    std::vector<ModelSpec::ElementSpec> elements;
    for (auto& e : s_.elements)
      if (!removed.count(e.name)) elements.push_back(std::move(e));
    s_.elements = std::move(elements);
    std::vector<ModelSpec::BondSpec> bonds;
    for (auto& b : s_.bonds)
      if (!removed.count(b.from) && !removed.count(b.to)) bonds.push_back(std::move(b));
    s_.bonds = std::move(bonds);
    auto has_element = [&](const std::string& n) {
      for (const auto& e : s_.elements)
        if (e.name == n) return true;
      return false;
    };
    s_.generalized.clear();
    s_.independent.clear();
    s_.quasi_velocities.clear();
    for (auto& j : joints_) {
      if (!j.tree) continue;
      if (j.spherical) {
        SphericalJunctions(j);
        continue;
      }
      for (const std::string& c : {j.slide, j.angle}) {
        if (c.empty()) continue;
        const std::string junction = c + "dot";
        motion_junctions_.push_back({junction, "", j.where});
        // (The Boltzmann-Hamel form: a joint rate is its own quasi-velocity.)
        if (bh_) s_.quasi_velocities.push_back({junction, "", j.where});
        if (!has_element(junction)) {
          // The rate was a definition (no spring, damper or actuator): it is
          // now the junction's flow.
          removed_definitions_.insert(junction);
          ModelSpec::ElementSpec e;
          e.name = junction;
          e.kind = "1";
          e.where = j.where;
          s_.elements.push_back(e);
          RenameVariable(junction, "f_" + junction);
        }
        for (auto& d : s_.displacements)
          if (d.name == c) d.of = junction, d.rate.clear(), d.rate_value.reset();
        s_.generalized.push_back({junction, "", j.where});
        // (Hamilton's form: every joint rate's port of the I field in integral
        // causality; the loops' constraint forces tie them.)
        if (!cut_joints_ || hamilton_) s_.independent.push_back({junction, "", j.where});
        if (j.has_rate && (j.type == "revolute" || j.type == "prismatic")) {
          s_.parameters.push_back({junction + "_v0", Text(j.rate), j.where});
          initial_rate_[junction] = j.rate;
        }
      }
    }
    // 2. Forward kinematics along the tree: poses as definitions of the joint
    //    coordinates, in tree order (a body after its parent).
    std::vector<ModelSpec::Item> kinematics;
    std::vector<int> order;
    std::vector<char> done(bodies_.size(), 0);
    done[0] = 1;
    while (order.size() + 1 < bodies_.size())
      for (size_t b = 1; b < bodies_.size(); ++b) {
        if (done[b]) continue;
        const JointInfo& j = joints_[bodies_[b].parent_joint];
        const int parent = j.reversed ? j.b2 : j.b1;
        if (!done[parent]) continue;
        done[b] = 1;
        order.push_back(static_cast<int>(b));
      }
    for (int b : order) {
      BodyInfo& B = bodies_[b];
      const JointInfo& j = joints_[B.parent_joint];
      const BodyInfo& b1 = bodies_[j.b1];
      const BodyInfo& b2 = bodies_[j.b2];
      const ex th = j.angle.empty() ? ex(0) : ex(Sym(j.angle));  // (a spherical joint: its Cardan angles below)
      // The slide from the written start: s - s0, s0 = A . (R1_0^T (p_Q0 - p1_0) - r1).
      const Vec pQ0 = Add(b2.pu, Mul(b2.Ru, j.r2));
      const Vec rel = MulT(b1.Ru, Sub(b2.pu, b1.pu));  // G2 - G1 at the start, in body 1's frame
      const ex s0 = Dot(j.axis, Sub(MulT(b1.Ru, Sub(pQ0, b1.pu)), j.r1));
      const ex ds = j.slide.empty() ? ex(0) : ex(Sym(j.slide)) - s0;
      const Mat Rq = j.spherical ? Cardan(Sym(j.angles[0]), Sym(j.angles[1]), Sym(j.angles[2])) : Rot(j.axis, th);
      const Mat C = MatMul(Transpose(b1.Ru), b2.Ru);  // R1^T R2 at the start
      // Body 2 relative to body 1: R2 = R1 Rot(A, th) C, and
      // p2 = p1 + R1 (r1 + Rot(A, th) (rel - r1) + A ds).
      Vec offset = Add(j.r1, Mul(Rq, Sub(rel, j.r1)));
      for (int i = 0; i < 3; ++i) offset[i] += j.axis[i] * ds;
      Mat R;
      Vec p;
      if (!j.reversed) {
        R = MatMul(MatMul(b1.R, Rq), C);
        p = Add(b1.p, Mul(b1.R, offset));
      } else {
        R = MatMul(MatMul(b2.R, Transpose(C)), Transpose(Rq));
        p = Sub(b2.p, Mul(R, offset));
      }
      const std::string& n = B.name;
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
          const std::string name = fmt::format("{}_R{}{}", n, r + 1, c + 1);
          kinematics.push_back({name, Text(R[r][c]), B.where});
          B.R[r][c] = Sym(name);
          full_[Sym(name)] = R[r][c].subs(full_);
        }
      for (int i = 0; i < 3; ++i) {
        const std::string name = fmt::format("{}_{}", n, kAxes[i]);
        kinematics.push_back({name, Text(p[i]), B.where});
        B.p[i] = Sym(name);
        full_[Sym(name)] = p[i].subs(full_);
      }
    }
    // 3. The bodies' velocities from the joint rates: for a joint's rotation
    //    about the world axis a through P, every body beyond it moves with
    //    w += a rate and v_G += a x (p_G - P) rate; for a slide, v_G += a rate.
    //    A joint whose body1 follows body2 (reversed) moves it the other way.
    std::set<std::string> body_states;
    for (size_t b = 1; b < bodies_.size(); ++b) {
      const std::string& n = bodies_[b].name;
      for (const char* s : {"x", "y", "z", "q0", "q1", "q2", "q3", "a", "b", "g"}) body_states.insert(n + "_" + s);
      for (int r = 1; r <= 3; ++r)
        for (int c = 1; c <= 3; ++c) removed_definitions_.insert(fmt::format("{}_R{}{}", n, r, c));
    }
    std::vector<ModelSpec::DisplacementSpec> displacements;
    for (auto& d : s_.displacements)
      if (!body_states.count(d.name)) displacements.push_back(std::move(d));
    s_.displacements = std::move(displacements);
    std::vector<ModelSpec::Item> definitions = kinematics;
    for (auto& d : s_.definitions)
      if (!removed_definitions_.count(d.name)) definitions.push_back(std::move(d));
    s_.definitions = std::move(definitions);
    // An assembly of the start (lagrange1 of a closed chain) keeps the
    // coordinates and rates of the joints with initial values, and of the
    // joints between them and the ground, as the Newton–Euler expansion
    // keeps the bodies they place (initial_coordinates.cc).
    s_.assembly_held.clear();
    std::set<int> held_joints;
    for (size_t k = 0; k < joints_.size(); ++k) {
      if (!joints_[k].tree || !joints_[k].has_initial) continue;
      for (int j = static_cast<int>(k); j >= 0 && !held_joints.count(j);) {
        held_joints.insert(j);
        const int parent = joints_[j].reversed ? joints_[j].b2 : joints_[j].b1;
        j = bodies_[parent].parent_joint;
      }
    }
    for (int j : held_joints)
      for (const std::string& c : {joints_[j].slide, joints_[j].angle})
        if (!c.empty()) s_.assembly_held.push_back(c), s_.assembly_held.push_back("v_" + c + "dot");

    // The junctions of each body's velocity components: the 0-junction of the
    // joint rates (or the flow source holding a component at zero), whose
    // effort is the net force or moment of the joints on the body.
    std::vector<std::array<ex, 6>> joint_load(bodies_.size());
    std::set<std::string> held;  // velocity components no joint rate moves
    for (size_t b = 1; b < bodies_.size(); ++b) {
      const BodyInfo& B = bodies_[b];
      // Columns of the Jacobian, by coordinate: v_G (world) and w_B (body).
      // (Keyed by the motion's key; the junction it comes from beside it.)
      std::vector<std::pair<Motion, std::array<ex, 6>>> columns;
      for (int k = B.parent_joint; k >= 0;) {
        const JointInfo& j = joints_[k];
        const BodyInfo& b1 = bodies_[j.b1];
        const ex sign = j.reversed ? -1 : 1;
        const Vec P = Add(b1.p, Mul(b1.R, j.r1));
        for (const Motion& mo : Motions(j)) {
          if (mo.rotation) {
            const Vec v = Cross(mo.axis, Sub(B.p, P));
            // Body2's own axis seen from body2 is the unit vector itself.
            Vec w = MulT(B.R, mo.axis);
            if (mo.body_axis >= 0 && &B == &bodies_[j.b2]) w = {0, 0, 0}, w[mo.body_axis] = 1;
            columns.push_back({mo, {sign * v[0], sign * v[1], sign * v[2], sign * w[0], sign * w[1], sign * w[2]}});
          } else {
            columns.push_back({mo, {sign * mo.axis[0], sign * mo.axis[1], sign * mo.axis[2], 0, 0, 0}});
          }
        }
        const int parent = j.reversed ? j.b2 : j.b1;
        k = bodies_[parent].parent_joint;
      }
      for (int c = 0; c < 6; ++c) {
        const std::string junction = fmt::format("{}_{}{}", B.name, c < 3 ? "v" : "w", kAxes[c % 3]);
        const std::string sum = junction + "_q";
        int terms = 0;
        for (const auto& [mo, col] : columns) {
          const std::string& coord = mo.key;
          const ex ratio = col[c].expand();
          // Leave out the entries that vanish once the poses are written out.
          const ex written_out = ratio.subs(full_);
          if (ratio.is_zero() || TrigZero(written_out)) continue;
          jacobian_[junction][mo.junction] = written_out;
          if (terms++ == 0) {
            Element(sum, "0", "", "", B.where);
            Bond(sum, junction, B.where);
          }
          const std::string tf = fmt::format("{}_{}", junction, coord);
          Element(tf, IsConstant(ratio) ? "TF" : "MTF", "ratio", Text(ratio), B.where);
          Bond(mo.junction, tf, B.where);
          Bond(tf, sum, B.where);
        }
        if (terms == 0) {
          // This velocity component stays zero: a flow source holds it.
          Element(junction + "_held", "Sf", "flow", "0", B.where);
          Bond(junction + "_held", junction, B.where);
        }
        joint_load[b][c] = Sym("e_" + (terms ? sum : junction + "_held"));
        if (!terms) held.insert(junction);
      }
    }
    // A joint rate that moves a single velocity component and carries no
    // spring, damper or actuator: a zero effort keeps its junction
    // two-bonded (LaCAP's ASF is its other end), as a body's weight does for
    // the body's junctions (bodies.cc).
    for (const auto& g : motion_junctions_) {
      int n = 0;
      for (const auto& b : s_.bonds) n += (b.from == g.name) + (b.to == g.name);
      if (n >= 2) continue;
      Element(g.name + "_load", "Se", "effort", "0", g.where);
      Bond(g.name + "_load", g.name, g.where);
    }
    DropRowsOfHeldComponents(held);
    if (hamilton_) Hamilton(&joint_load);
    JointForces(joint_load);
  }

  // A tree joint's free motions, in the order of its transformers: a
  // rotation about, then a slide along, the axis; a spherical joint's three
  // rotations, either about the Cardan angles' axes (the rates: body1's x,
  // x then y turned by angle1, z turned by angle1 and angle2) or, for the
  // Boltzmann-Hamel form's quasi-velocities, about body2's own axes.
  std::vector<Motion> Motions(const JointInfo& j) {
    const BodyInfo& b1 = bodies_[j.b1];
    std::vector<Motion> out;
    if (j.spherical) {
      if (bh_ && j.body_quasi) {
        const BodyInfo& b2 = bodies_[j.b2];
        for (int k = 0; k < 3; ++k)
          out.push_back({QuasiJunction(j, k), QuasiJunction(j, k), true, {b2.R[0][k], b2.R[1][k], b2.R[2][k]}, k});
        return out;
      }
      const Mat R1a = MatMul(b1.R, Rot({1, 0, 0}, Sym(j.angles[0])));
      const Mat R1ab = MatMul(R1a, Rot({0, 1, 0}, Sym(j.angles[1])));
      const Vec axes[3] = {{b1.R[0][0], b1.R[1][0], b1.R[2][0]},
                           {R1a[0][1], R1a[1][1], R1a[2][1]},
                           {R1ab[0][2], R1ab[1][2], R1ab[2][2]}};
      for (int k = 0; k < 3; ++k) out.push_back({j.angles[k], j.angles[k] + "dot", true, axes[k]});
      return out;
    }
    const Vec a = Mul(b1.R, j.axis);
    if (!j.angle.empty()) out.push_back({j.angle, j.angle + "dot", true, a});
    if (!j.slide.empty()) out.push_back({j.slide, j.slide + "dot", false, a});
    return out;
  }
  static std::string QuasiJunction(const JointInfo& j, int k) { return fmt::format("{}_w{}", j.name, kAxes[k]); }

  // A spherical joint's junctions and coordinates. Its Cardan angles are
  // displacements; under Lagrange's and Hamilton's forms their rates are the
  // flows of generalized 1-junctions <J>_angle<k>dot. Under the
  // Boltzmann-Hamel form (quasi_velocities: body, the default) the junctions
  // are <J>_wx, <J>_wy, <J>_wz, the relative angular velocity along body2's
  // axes, w = C^T A(angles) angles' (C = R1^T R2 at the start, A the Cardan
  // angles' body-frame matrix), and the angles' rates are the kinematic
  // relations angles' = A^-1 C w: for R_rel = Rx(a1) Ry(a2) Rz(a3) and
  // u = C w,
  //   a1' = (cos a3 u1 - sin a3 u2) / cos a2,   a2' = sin a3 u1 + cos a3 u2,
  //   a3' = u3 - sin a2 (cos a3 u1 - sin a3 u2) / cos a2
  // (singular at a2 = +-pi/2). The start is the written pose (the angles'
  // zero), the rates those of body2's written angular velocity.
  void SphericalJunctions(const JointInfo& j) {
    const bool quasi = bh_ && j.body_quasi;
    const BodyInfo& b1 = bodies_[j.b1];
    const BodyInfo& b2 = bodies_[j.b2];
    const Mat C = MatMul(Transpose(b1.Ru), b2.Ru);
    const BodyInfo& moved = bodies_[j.reversed ? j.b1 : j.b2];
    Vec w0 = {0, 0, 0};
    if (moved.has_w0) w0 = moved.w0;  // (SphericalStart: body2 on a joint to the ground)
    std::vector<std::string> junctions;
    for (int k = 0; k < 3; ++k) junctions.push_back(quasi ? QuasiJunction(j, k) : j.angles[k] + "dot");
    const Vec u0 = Mul(C, w0);
    for (int k = 0; k < 3; ++k) {
      Element(junctions[k], "1", "", "", j.where);
      motion_junctions_.push_back({junctions[k], "", j.where});
      if (quasi) {
        s_.quasi_velocities.push_back({junctions[k], "", j.where});
      } else {
        s_.generalized.push_back({junctions[k], "", j.where});
        s_.independent.push_back({junctions[k], "", j.where});
        if (bh_) s_.quasi_velocities.push_back({junctions[k], "", j.where});
      }
      const ex v0 = quasi ? w0[k] : u0[k];
      if (moved.has_w0) {
        s_.parameters.push_back({junctions[k] + "_v0", Text(v0), j.where});
        initial_rate_[junctions[k]] = v0;
      }
    }
    for (int k = 0; k < 3; ++k) {
      ModelSpec::DisplacementSpec d(j.angles[k], quasi ? "" : junctions[k], "", "0", j.where);
      if (quasi) {
        using GiNaC::cos;
        using GiNaC::sin;
        Vec u;
        for (int r = 0; r < 3; ++r)
          u[r] = C[r][0] * Sym("f_" + junctions[0]) + C[r][1] * Sym("f_" + junctions[1]) +
                 C[r][2] * Sym("f_" + junctions[2]);
        const ex a2 = Sym(j.angles[1]), a3 = Sym(j.angles[2]);
        const ex first = (cos(a3) * u[0] - sin(a3) * u[1]) / cos(a2);
        const ex rate[3] = {first, sin(a3) * u[0] + cos(a3) * u[1], u[2] - sin(a2) * first};
        d.rate = Text(rate[k]);
      }
      s_.displacements.push_back(d);
    }
  }

  // Hamilton's equations in joint coordinates (docs/multibody.md, "Lagrange
  // and Hamilton forms"). The bodies' kinetic energy becomes one I field on
  // the generalized junctions: its inertia matrix is the virtual inertia
  // M(q) = sum over bodies of J_v^T m J_v + J_w^T I_B J_w (seed 003, eq. 12),
  // the Jacobian's columns written out in the joint coordinates and simplified
  // entry by entry; HaCAP puts it in integral causality, so the states are
  // the generalized momenta p = M(q) q' and q' solves M(q) q' = p
  // numerically. A joint that closes a loop keeps its constraint rows (as
  // under lagrange1): their forces are multipliers solved with the momentum
  // derivatives. The bodies' weights, loads and springs stay on their
  // velocity junctions and reach the joint rates through the Jacobian's
  // transformers: the generalized forces.
  //
  // The joint forces <J>_F... need the bodies' inertial forces, which the I
  // field does not hold apart: each body's inertias and Euler junction
  // structure move to observer junctions <B>_vx_o ... whose flows flow
  // sources <B>_vx_drive copy from the body's velocity junctions. In
  // derivative causality they compute m a and the Euler moments from the
  // motion without storing energy of the model's own (ModelSpec::observers);
  // the joints' load on a body is then the drive's effort less the loads'.
  void Hamilton(std::vector<std::array<ex, 6>>* joint_load) {
    std::vector<std::string> coords;
    for (const auto& g : s_.generalized) coords.push_back(g.name.substr(0, g.name.size() - 3));  // <coord>dot
    const size_t n = coords.size();
    std::vector<std::vector<ex>> M(n, std::vector<ex>(n, 0));
    std::set<std::string> moved;  // the body-side ends of the inertias' and the EJS's bonds
    for (size_t b = 1; b < bodies_.size(); ++b) {
      const std::string& name = bodies_[b].name;
      const ModelSpec::Entry& e = mb_.bodies[b - 1];
      const ex m = Parse(Scalar(e, "mass"));
      const auto* inertia = Get(e, "inertia");
      ex J[3][3];
      const int idx[3][3] = {{0, 3, 4}, {3, 1, 5}, {4, 5, 2}};
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
          J[r][c] = inertia->values.size() == 3 ? (r == c ? Parse(inertia->values[r]) : ex(0))
                                                : Parse(inertia->values[idx[r][c]]);
      auto column = [&](const std::string& junction, const std::string& coord) -> ex {
        const auto it = jacobian_.find(junction);
        if (it == jacobian_.end()) return 0;
        const auto jt = it->second.find(coord + "dot");
        return jt == it->second.end() ? ex(0) : jt->second;
      };
      for (size_t i = 0; i < n; ++i)
        for (size_t k = i; k < n; ++k) {
          ex term = 0;
          for (int c = 0; c < 3; ++c) {
            const std::string v = fmt::format("{}_v{}", name, kAxes[c]);
            term += m * column(v, coords[i]) * column(v, coords[k]);
            for (int d = 0; d < 3; ++d)
              term += column(fmt::format("{}_w{}", name, kAxes[c]), coords[i]) * J[c][d] *
                      column(fmt::format("{}_w{}", name, kAxes[d]), coords[k]);
          }
          M[i][k] += term;
        }
      // The observers.
      std::set<std::string> inertial;  // the body's inertias, principal-axis transformers and EJS gyrators
      for (int c = 0; c < 3; ++c) {
        inertial.insert(fmt::format("{}_m{}", name, kAxes[c]));
        inertial.insert(fmt::format("{}_J{}", name, kAxes[c]));
        inertial.insert(fmt::format("{}_ejs_{}", name, kAxes[c]));
        for (int k = 1; k <= 3; ++k) inertial.insert(fmt::format("{}_t{}{}", name, kAxes[c], k));
      }
      for (int k = 1; k <= 3; ++k) inertial.insert(fmt::format("{}_J{}", name, k));  // a full tensor's principal inertias
      for (const auto& el : s_.elements)
        if (el.kind == "I" && inertial.count(el.name)) s_.observers.push_back(el.name);
      for (int c = 0; c < 6; ++c) {
        const std::string junction = fmt::format("{}_{}{}", name, c < 3 ? "v" : "w", kAxes[c % 3]);
        const std::string observer = junction + "_o", drive = junction + "_drive";
        bool any = false;
        for (auto& bond : s_.bonds) {
          if (bond.from == junction && inertial.count(bond.to)) bond.from = observer, any = true;
          if (bond.to == junction && inertial.count(bond.from)) bond.to = observer, any = true;
        }
        if (!any) continue;
        // A junction left with one bond (a held component with neither weight
        // nor load) keeps a zero effort on its other side, as "_load" does.
        int left = 0;
        for (const auto& bond : s_.bonds) left += (bond.from == junction) + (bond.to == junction);
        if (left < 2) {
          Element(junction + "_free", "Se", "effort", "0", bodies_[b].where);
          Bond(junction + "_free", junction, bodies_[b].where);
        }
        Element(observer, "1", "", "", bodies_[b].where);
        Element(drive, "MSf", "flow", "f_" + junction, bodies_[b].where);
        s_.observers.push_back(drive);
        Bond(drive, observer, bodies_[b].where);
        (*joint_load)[b][c] += Sym("e_" + drive);
      }
    }
    for (size_t i = 0; i < n; ++i)
      for (size_t k = 0; k < i; ++k) M[i][k] = M[k][i];
    for (auto& row : M)
      for (auto& x : row) x = TrigSimplify(x);
    // The field, its ports bonded from the generalized junctions, its
    // coordinates the joint coordinates; p(0) = M(q0) q'(0).
    GiNaC::exmap start;
    for (const auto& d : s_.displacements)
      for (const auto& c : coords)
        if (d.name == c)
          start[Sym(c)] = d.initial_value ? Adopt(*d.initial_value) : d.initial.empty() ? ex(0) : Parse(d.initial);
    std::vector<ex> rate(n, 0);
    for (size_t i = 0; i < n; ++i)
      if (const auto it = initial_rate_.find(coords[i] + "dot"); it != initial_rate_.end()) rate[i] = it->second;
    ModelSpec::FieldSpec f;
    f.name = "joint_inertia";
    f.kind = "IF";
    f.where = mb_.where;
    f.coordinates = coords;
    f.inertia_value = M;
    for (size_t i = 0; i < n; ++i) {
      f.ports.push_back("I_" + coords[i]);
      ex p0 = 0;
      for (size_t k = 0; k < n; ++k) p0 += M[i][k].subs(start) * rate[k];
      f.initial_value.push_back(p0);
      Bond(coords[i] + "dot", f.ports.back(), s_.generalized[i].where);
    }
    s_.fields.push_back(std::move(f));
  }

  // Sums of products of sines and cosines as a reader writes them: sin^2
  // replaced by 1 - cos^2, expanded and normalized (the mass matrix of a
  // pendulum, M L^2/4 cos^2 + M L^2/4 sin^2 + I0, becomes M L^2/4 + I0).
  static ex TrigSimplify(const ex& e) {
    using namespace GiNaC;
    const ex w = wild();
    return e.expand().subs(pow(sin(w), 2) == 1 - pow(cos(w), 2), subs_options::algebraic).expand().normal();
  }

  // A constraint row of a joint that closes a loop (lagrange1) whose flow,
  // written out in the joint rates, is zero: it holds whatever the motion
  // (the out-of-plane rows of a planar loop), so its force is not determined
  // by anything. It goes, and its force is 0 in the joint's <J>_F.../<J>_T...
  // (the minimum-norm choice).
  void DropRowsOfHeldComponents(const std::set<std::string>& held) {
    std::set<std::string> removed;
    for (const auto& src : s_.elements) {
      if (src.joint.empty() || src.kind != "Se") continue;
      std::string row;
      for (const auto& b : s_.bonds)
        if (b.to == src.name) row = b.from;
      std::map<std::string, ex> flow;  // by joint coordinate
      std::vector<std::string> parts;
      for (const auto& b : s_.bonds) {
        if (b.to != row || b.from == src.name) continue;
        parts.push_back(b.from);
        ex ratio = 0;
        for (const auto& e : s_.elements)
          if (e.name == b.from && !e.laws.empty())
            ratio = (e.law_value ? Adopt(*e.law_value) : Parse(e.laws[0].second)).subs(full_);
        for (const auto& in : s_.bonds)
          if (in.to == b.from && !held.count(in.from))
            for (const auto& [coord, column] : jacobian_[in.from]) flow[coord] += ratio * column;
      }
      bool moves = false;
      for (const auto& [coord, f] : flow) moves = moves || !TrigZero(f);
      if (moves || row.empty()) continue;
      removed.insert(src.name);
      removed.insert(row);
      removed.insert(parts.begin(), parts.end());
    }
    if (removed.empty()) return;
    for (const auto& name : removed)
      for (const auto& e : s_.elements)
        if (e.name == name && e.kind == "Se") RenameVariable("e_" + name, "0");
    std::vector<ModelSpec::ElementSpec> elements;
    for (auto& e : s_.elements)
      if (!removed.count(e.name)) elements.push_back(std::move(e));
    s_.elements = std::move(elements);
    std::vector<ModelSpec::BondSpec> bonds;
    for (auto& b : s_.bonds)
      if (!removed.count(b.from) && !removed.count(b.to)) bonds.push_back(std::move(b));
    s_.bonds = std::move(bonds);
  }

  // The force and moment each tree joint applies to its body2 (<J>_Fx ...
  // <J>_Tz, world components, the moment about body2's joint point Q), as the
  // Newton–Euler expansion defines them, from the bodies' accelerations: the
  // joints' net load on each body beyond the joint, summed (the joints
  // between those bodies cancel in pairs), less its component along the
  // joint's free directions (what its spring, damper and actuator carry).
  void JointForces(const std::vector<std::array<ex, 6>>& joint_load) {
    for (size_t k = 0; k < joints_.size(); ++k) {
      const JointInfo& j = joints_[k];
      if (!j.tree) continue;
      const int child = j.reversed ? j.b1 : j.b2;
      const BodyInfo& b1 = bodies_[j.b1];
      const BodyInfo& b2 = bodies_[j.b2];
      const Vec Q = Add(b2.p, Mul(b2.R, j.r2));
      Vec F = {0, 0, 0}, T = {0, 0, 0};
      for (size_t d = 1; d < bodies_.size(); ++d) {
        bool beyond = false;
        for (int b = static_cast<int>(d); b != 0 && !beyond; b = joints_[bodies_[b].parent_joint].reversed
                                                                     ? joints_[bodies_[b].parent_joint].b2
                                                                     : joints_[bodies_[b].parent_joint].b1)
          beyond = b == child;
        if (!beyond) continue;
        const BodyInfo& D = bodies_[d];
        Vec f, tau;
        for (int i = 0; i < 3; ++i) f[i] = joint_load[d][i], tau[i] = joint_load[d][3 + i];
        F = Add(F, f);
        T = Add(T, Add(Mul(D.R, tau), Cross(Sub(D.p, Q), f)));
      }
      if (j.reversed) F = {-F[0], -F[1], -F[2]}, T = {-T[0], -T[1], -T[2]};
      const Vec a = Mul(b1.R, j.axis);
      if (!j.slide.empty()) {
        const ex along = Dot(a, F);
        for (int i = 0; i < 3; ++i) F[i] -= along * a[i];
      }
      if (!j.angle.empty()) {
        const ex about = Dot(a, T);
        for (int i = 0; i < 3; ++i) T[i] -= about * a[i];
      }
      if (j.spherical) T = {0, 0, 0};  // every rotation free
      for (int i = 0; i < 3; ++i) {
        s_.definitions.push_back({fmt::format("{}_F{}", j.name, kAxes[i]), Text(F[i]), j.where});
        s_.definitions.push_back({fmt::format("{}_T{}", j.name, kAxes[i]), Text(T[i]), j.where});
      }
    }
  }

  // True when e is zero as a function of its arguments (trigonometric
  // identities included): exact for the sums of products of sines and
  // cosines that forward kinematics gives.
  static bool TrigZero(const ex& e) {
    using namespace GiNaC;
    const ex w = wild();
    ex out = e.expand().subs(pow(sin(w), 2) == 1 - pow(cos(w), 2), subs_options::algebraic);
    return out.expand().normal().is_zero();
  }

  void Element(const std::string& name, const std::string& kind, const std::string& key, const std::string& law,
               const SourceLocation& where) {
    ModelSpec::ElementSpec e;
    e.name = name;
    e.kind = kind;
    if (!key.empty()) e.laws.push_back({key, law});
    e.where = where;
    s_.elements.push_back(e);
  }
  void Bond(const std::string& from, const std::string& to, const SourceLocation& where) {
    ModelSpec::BondSpec b;
    b.from = from;
    b.to = to;
    b.where = where;
    s_.bonds.push_back(b);
  }

  ModelSpec& s_;
  const ModelSpec::MultibodySpec& mb_;
  const bool cut_joints_;  // joints that close loops keep their rows (multipliers)
  const bool hamilton_;    // Hamilton's equations: the bodies' inertias become one I field on the joint rates
  const bool bh_;          // the Boltzmann-Hamel form: quasi-velocity junctions (spherical joints: body2's axes)
  std::vector<ModelSpec::Item> motion_junctions_;  // every junction of a tree joint's motion
  std::map<std::string, ex> initial_rate_;         // by junction: its flow at the start
  std::vector<BodyInfo> bodies_;
  std::vector<JointInfo> joints_;
  std::set<std::string> parameters_, removed_definitions_;
  GiNaC::exmap values_;
  std::map<std::string, GiNaC::symbol> syms_;
  GiNaC::exmap full_;  // pose definitions written out in the joint coordinates
  // Each body velocity junction's flow per joint rate, written out.
  std::map<std::string, std::map<std::string, ex>> jacobian_;
};

}  // namespace
}  // namespace multibody

void ExpandMultibodyInJointCoordinates(ModelSpec* spec, bool cut_joints_as_multipliers) {
  const ModelSpec::MultibodySpec mb = spec->multibody;
  ExpandMultibody(spec);
  multibody::JointCoordinateExpander(spec, mb, cut_joints_as_multipliers).Run();
}

void ExpandMultibodyForBoltzmannHamel(ModelSpec* spec) {
  const ModelSpec::MultibodySpec mb = spec->multibody;
  ExpandMultibody(spec);
  multibody::JointCoordinateExpander(spec, mb, /*cut_joints=*/false, /*hamilton=*/false, /*boltzmann_hamel=*/true)
      .Run();
}

void ExpandMultibodyForHamilton(ModelSpec* spec) {
  const ModelSpec::MultibodySpec mb = spec->multibody;
  ExpandMultibody(spec);
  multibody::JointCoordinateExpander(spec, mb, /*cut_joints=*/true, /*hamilton=*/true).Run();
}

}  // namespace paynter
