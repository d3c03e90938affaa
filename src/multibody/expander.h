// src/multibody/expander.h — the multibody expansion's state and its steps.
// Internal header: the steps are defined in
//   multibody.cc            Run, the settings, reading entries, writing elements and bonds
//   bodies.cc               AddBody: Newton–Euler bodies, their orientation
//   joints.cc               the joint types' table, AddJoint and its rows
//   initial_coordinates.cc  Propagate: bodies' initial poses from joint coordinates
//   loads.cc                AddLoad: forces, torques, point-to-point springs
//
// Expressions are built with GiNaC over symbols named as the model's variables
// and handed to BuildModel as they are (the `*_value`s of ModelSpec), not as
// texts: only what the user wrote (a mass, a damping) stays a text.
// `paynter expand` prints them (ModelSpecToYaml).
#pragma once

#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "joints.h"
#include "paynter/model.h"
#include "vec3.h"

namespace paynter::multibody {

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
  std::string name, coordinate;        // coordinate: <J>_angle / <J>_s ("" for other types)
  const JointType* type = nullptr;
  size_t b1 = 0, b2 = 0;               // indices into the bodies
  Vec axis, r1;                        // axis (unit, numeric) and point in body 1's frame
  ex q = 0, rate = 0;                  // initial coordinate (offset from the start) and rate
  ex s0 = 0;                           // slide: the coordinate of the written poses
  bool has_initial = false;
  SourceLocation where;
};

class Expander {
 public:
  explicit Expander(ModelSpec* spec) : s_(*spec), mb_(spec->multibody) {}

  void Run();

 private:
  // ---- reading entries and writing the spec (multibody.cc) ----------------------
  GiNaC::symbol Sym(const std::string& name);
  ex Parse(const std::string& text, const SourceLocation& where, const std::string& who);
  const ModelSpec::Field* Get(const ModelSpec::Entry& e, const std::string& key);
  std::string Name(const ModelSpec::Entry& e, const char* what);
  void CheckKeys(const ModelSpec::Entry& e, const std::string& who, const std::set<std::string>& allowed);
  Vec Vector(const ModelSpec::Field& f, const std::string& who, const std::string& what);
  Vec VectorOr(const ModelSpec::Entry& e, const std::string& key, const std::string& who, Vec dflt);
  std::string Scalar(const ModelSpec::Entry& e, const std::string& key, const std::string& who);
  // The parameters' values (numbers), by symbol: for what must be a number
  // when the model is built (axes, initial poses).
  const GiNaC::exmap& Values();
  std::array<double, 3> Axis(const ModelSpec::Entry& e, const std::string& key, const std::string& who,
                             std::array<double, 3> dflt);
  // The element written (valid until the next one): its law is `law`, a text
  // as the user wrote it, or set as an expression (law_value) by the caller.
  ModelSpec::ElementSpec& Element(const std::string& name, const std::string& kind, const std::string& key = "",
                                  const std::string& law = "");
  void BondTo(const std::string& from, const std::string& to);
  // A definition; `rate`, when given, is its time derivative in closed form.
  void Define(const std::string& name, const ex& value, std::optional<ex> rate = std::nullopt);
  // A displacement integrating the flow of `of`, or `rate` when `of` is "".
  ModelSpec::DisplacementSpec& Displacement(const std::string& name, const std::string& of, const ex& rate,
                                            const ex& initial);

  // ---- bodies (bodies.cc) ----------------------------------------------------------
  Body Ground();
  const Body& FindBody(const std::string& name, const SourceLocation& where, const std::string& who);
  void AddBody(const ModelSpec::Entry& e);

  // ---- joints (joints.cc) ----------------------------------------------------------
  // One part of a row: a body's velocity junction and its coefficient.
  struct Contribution {
    std::string junction;
    ex coefficient;
  };
  void Row(const std::string& row, const std::vector<Contribution>& parts);
  std::vector<Contribution> Translational(const Body& b1, const Body& b2, const Vec& r2, const Vec& d);
  std::vector<Contribution> Rotational(const Body& b1, const Body& b2, const Vec& e);
  std::vector<Contribution> Universal(const Body& b1, const Body& b2, const Vec& a1, const Vec& a2);
  void AddJoint(const ModelSpec::Entry& e);

  // ---- initial joint coordinates (initial_coordinates.cc) -------------------------
  void Propagate();

  // ---- loads (loads.cc) ------------------------------------------------------------
  void ApplyForce(const std::string& L, const Body& b, const Vec& r, const Vec& F);
  void AddSpring(const ModelSpec::Entry& e, const std::string& L);
  void AddLoad(const ModelSpec::Entry& e);

  ModelSpec& s_;
  const ModelSpec::MultibodySpec& mb_;
  bool cardan_ = false;
  std::string parasitic_k_, parasitic_c_;  // model-wide parasitic stiffness and damping (texts)
  Vec gravity_;
  std::vector<Body> bodies_;
  std::vector<JointRecord> joints_;
  std::map<std::string, GiNaC::symbol> syms_;
  std::optional<GiNaC::exmap> values_;
  SourceLocation where_;  // the entry being expanded: every element, bond and definition points at it
};

}  // namespace paynter::multibody
