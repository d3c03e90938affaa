// Joints of a `multibody:` section: the joint types (one definition each, in
// the table below) and AddJoint, which turns a joint into rows of relative
// velocity between its two bodies (docs/multibody.md, "Joints").
//
// A constrained direction is a row with an unknown effort source, the
// joint's constraint force or moment (seed 001); a free direction is a row
// with the joint's coordinate and, for a joint with one free direction, its
// spring, damper and actuator. To add a joint type, add its definition here
// and to the table in JointTypes().
#include "joints.h"

#include <fmt/format.h>
#include <ginac/ginac.h>

#include <cmath>

#include "expander.h"

namespace paynter::multibody {
namespace {

constexpr Direction kAxis = Direction::kAxis;
constexpr Direction kFirstNormal = Direction::kFirstNormal;
constexpr Direction kSecondNormal = Direction::kSecondNormal;

// ---- the joint types ------------------------------------------------------------

// revolute: a hinge; rotation about the axis through the joint point.
const JointType kRevolute = {
    .name = "revolute",
    .constrained_translations = {kAxis, kFirstNormal, kSecondNormal},
    .constrained_rotations = {kFirstNormal, kSecondNormal},
    .free_rotations = {kAxis},
    .coordinate = Coordinate::kAngle,
};

// prismatic: a slider; translation along the axis, no rotation.
const JointType kPrismatic = {
    .name = "prismatic",
    .constrained_translations = {kFirstNormal, kSecondNormal},
    .constrained_rotations = {kAxis, kFirstNormal, kSecondNormal},
    .free_translations = {kAxis},
    .coordinate = Coordinate::kSlide,
};

// spherical: a ball joint; the joint points coincide, every rotation is free.
const JointType kSpherical = {
    .name = "spherical",
    .constrained_translations = {kAxis, kFirstNormal, kSecondNormal},
};

// cylindrical: translation along and rotation about the axis.
const JointType kCylindrical = {
    .name = "cylindrical",
    .constrained_translations = {kFirstNormal, kSecondNormal},
    .constrained_rotations = {kFirstNormal, kSecondNormal},
    .free_translations = {kAxis},
    .free_rotations = {kAxis},
};

// universal: a Hooke joint; the joint points coincide and body1's axis stays
// perpendicular to body2's axis2, leaving two rotations free.
const JointType kUniversal = {
    .name = "universal",
    .constrained_translations = {kAxis, kFirstNormal, kSecondNormal},
    .axis2_row = true,
};

// rotational: as universal, four constraints and two rotations free (seed 003, Table 3).
const JointType kRotational = {
    .name = "rotational",
    .constrained_translations = {kAxis, kFirstNormal, kSecondNormal},
    .axis2_row = true,
};

// planar: body2 slides on the plane normal to the axis and turns about the axis.
const JointType kPlanar = {
    .name = "planar",
    .constrained_translations = {kAxis},
    .constrained_rotations = {kFirstNormal, kSecondNormal},
    .free_translations = {kFirstNormal, kSecondNormal},
    .free_rotations = {kAxis},
};

// fixed: the two bodies move as one.
const JointType kFixed = {
    .name = "fixed",
    .constrained_translations = {kAxis, kFirstNormal, kSecondNormal},
    .constrained_rotations = {kAxis, kFirstNormal, kSecondNormal},
};

bool AnyType(const JointType&) { return true; }
bool OneFreeDirection(const JointType& t) { return t.FreeCount() == 1; }
bool HasCoordinate(const JointType& t) { return t.coordinate != Coordinate::kNone; }

}  // namespace

const std::vector<JointType>& JointTypes() {
  static const std::vector<JointType> table = {kRevolute,  kPrismatic,  kSpherical, kCylindrical,
                                               kUniversal, kRotational, kPlanar,    kFixed};
  return table;
}

const JointType* FindJointType(const std::string& name) {
  for (const auto& t : JointTypes())
    if (name == t.name) return &t;
  return nullptr;
}

std::string JointTypeNames(bool (*keep)(const JointType&), const char* last) {
  std::vector<std::string> names;
  for (const auto& t : JointTypes())
    if (keep(t)) names.push_back(t.name);
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i == 0 ? "" : i + 1 == names.size() ? last : ", ") + names[i];
  return s;
}

// ---- rows -------------------------------------------------------------------------
// One row: the relative velocity `coefficients . velocities` summed at a
// 0-junction `row`. Contributions of a body's junctions enter through
// transformers (MTF when the coefficient varies).
void Expander::Row(const std::string& row, const std::vector<Contribution>& parts) {
  Element(row, "0");
  int k = 0;
  for (const auto& c : parts) {
    const ex coef = c.coefficient.expand();
    if (coef.is_zero()) continue;
    const std::string tf = fmt::format("{}_{}", row, ++k);
    bool constant = true;  // no model variable in it (their names have '_')
    for (auto it = coef.preorder_begin(); constant && it != coef.preorder_end(); ++it)
      if (GiNaC::is_a<GiNaC::symbol>(*it)) {
        const std::string& name = GiNaC::ex_to<GiNaC::symbol>(*it).get_name();
        if (name.find('_') != std::string::npos) constant = false;
      }
    Element(tf, constant ? "TF" : "MTF", "ratio").law_value = coef;
    BondTo(c.junction, tf);
    BondTo(tf, row);
  }
  if (k == 0) ThrowAt(where_, row, "a joint row with no motion in it", "two bodies that can move relative to each other", "");
}

auto Expander::Translational(const Body& b1, const Body& b2, const Vec& r2, const Vec& d) -> std::vector<Contribution> {
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

auto Expander::Rotational(const Body& b1, const Body& b2, const Vec& e) -> std::vector<Contribution> {
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

auto Expander::Universal(const Body& b1, const Body& b2, const Vec& a1, const Vec& a2) -> std::vector<Contribution> {
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

void Expander::AddJoint(const ModelSpec::Entry& e) {
  const std::string J = Name(e, "joint");
  where_ = e.where;
  CheckKeys(e, J, {"name", "type", "body1", "body2", "point1", "point2", "axis", "axis2", "stiffness", "rest",
                   "damping", "actuator", "parasitic_stiffness", "parasitic_damping", "initial", "junction", "quasi_velocities"});
  std::string pk = Scalar(e, "parasitic_stiffness", J), pc = Scalar(e, "parasitic_damping", J);
  if (pk.empty()) pk = parasitic_k_;
  if (pc.empty()) pc = parasitic_c_;
  const std::string type = Scalar(e, "type", J);
  const JointType* kind = FindJointType(type);
  if (!kind) ThrowAt(e.where, J, fmt::format("unknown joint type '{}'", type), JointTypeNames(AnyType, " or "), type);
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
  // The joint type's directions, by their index (Direction).
  const Vec* basis[3] = {&A, &B1, &B2};
  auto index = [](Direction d) { return static_cast<int>(d); };

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
    auto& source = Element(src, "Se", "constraint", "0");
    source.position_value = position;
    source.joint = J;
    source.direction = direction;
    source.parasitic_stiffness = pk;
    source.parasitic_damping = pc;
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
  for (const Direction dir : kind->constrained_translations) {
    const Vec& d = *basis[index(dir)];
    constrained(Translational(b1, b2, r2, d), Mul(b1.R, d), true, Dot(Mul(b1.R, d), Sub(pQ, pP)),
                describe(index(dir), "translation"));
  }
  for (const Direction dir : kind->constrained_rotations) {
    const Vec& d = *basis[index(dir)];
    constrained(Rotational(b1, b2, d), Mul(b1.R, d), false, rot_position(index(dir)),
                describe(index(dir), "rotation"));
  }
  if (kind->axis2_row) {
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
  // `junction: true`: the free direction's 1-junction even with nothing on it, for a bond to join.
  const std::string jn = Scalar(e, "junction", J);
  if (!jn.empty() && jn != "true" && jn != "false")
    ThrowAt(Get(e, "junction")->where, J, "'junction' is true or false", "junction: true", jn,
            "junction: true gives the joint's rate a 1-junction that a bond can join");
  const bool junction = jn == "true";
  const size_t nfree = kind->FreeCount();
  if (nfree != 1 && (!K.empty() || !c.empty() || !act.empty() || junction))
    ThrowAt(e.where, J, fmt::format("a {} joint has {} free directions: stiffness, damping, actuator and junction need exactly one",
                                 type, nfree),
         JointTypeNames(OneFreeDirection, ", ") + " (one free direction)", type, "use loads for the other joint types");
  int f = 0;
  auto free_row = [&](const std::vector<Contribution>& parts, bool translational, const ex& initial) {
    const std::string row = fmt::format("{}_free{}", J, ++f);
    const std::string coord = translational ? (nfree == 1 ? J + "_s" : fmt::format("{}_s{}", J, f))
                                            : (nfree == 1 ? J + "_angle" : fmt::format("{}_angle{}", J, f));
    const std::string rate = coord + "dot";
    if (K.empty() && c.empty() && act.empty() && !junction) {
      // Nothing acts along this direction: no junction, only the coordinate
      // (and its rate, as a definition).
      ex r = 0;
      for (const auto& p : parts) r += p.coefficient * Sym("f_" + p.junction);
      Define(rate, r);
      Displacement(coord, "", r, initial);
      return;
    }
    Row(row, parts);
    Element(rate, "1");  // common relative velocity; efforts of spring, damper, actuator add up
    BondTo(row, rate);
    Displacement(coord, rate, 0, initial);
    if (!K.empty()) {
      Element(J + "_spring", "C", "effort", fmt::format("({})*({} - ({}))", K, coord, rest.empty() ? "0" : rest));
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
  for (const Direction dir : kind->free_translations) {
    const Vec& d = *basis[index(dir)];
    free_row(Translational(b1, b2, r2, d), true, Dot(rel0, d));
  }
  for (const Direction dir : kind->free_rotations) free_row(Rotational(b1, b2, *basis[index(dir)]), false, 0);
  // The coordinate of a one-direction joint from the poses (to make it
  // consistent after an assembly): the slide (R1 A).(p_Q - p_P), or the angle
  // atan2((R1 B2).(R2 B1'), (R1 B1).(R2 B1')) from the written start.
  if (nfree == 1 && kind->coordinate != Coordinate::kNone) {
    const std::string coord = kind->coordinate == Coordinate::kAngle ? J + "_angle" : J + "_s";
    for (auto& d : s_.displacements)
      if (d.name == coord) {
        if (kind->coordinate == Coordinate::kSlide) {
          d.position_value = Dot(Mul(b1.R, A), Sub(pQ, pP));
        } else {
          const Vec b1_2 = Mul(b2.R, image2(B1));
          d.position_value = GiNaC::atan2(Dot(Mul(b1.R, B2), b1_2), Dot(Mul(b1.R, B1), b1_2));
          d.period = 2 * M_PI;
        }
      }
  }

  // The joint for the propagation of initial joint coordinates.
  JointRecord rec;
  rec.name = J;
  rec.type = kind;
  rec.where = e.where;
  for (size_t i = 0; i < bodies_.size(); ++i) {
    if (bodies_[i].name == b1.name) rec.b1 = i;
    if (bodies_[i].name == b2.name) rec.b2 = i;
  }
  rec.axis = A;
  rec.r1 = r1;
  if (kind->coordinate == Coordinate::kAngle) rec.coordinate = J + "_angle";
  if (kind->coordinate == Coordinate::kSlide) rec.coordinate = J + "_s", rec.s0 = Dot(rel0, A);
  if (const auto* f = Get(e, "initial")) {
    if (kind->coordinate == Coordinate::kNone)
      ThrowAt(f->where, J, fmt::format("a {} joint takes no initial coordinate", type),
              "initial: on " + JointTypeNames(HasCoordinate, " and ") + " joints", "initial:",
              "give the bodies' positions and velocities instead");
    if (f->is_list && f->values.size() != 2)
      ThrowAt(f->where, J, "'initial' is the joint coordinate, or [coordinate, rate]",
              kind->coordinate == Coordinate::kAngle ? "initial: angle, or initial: [angle, angular rate]"
                                 : "initial: displacement, or initial: [displacement, rate]",
              fmt::format("{} values", f->values.size()));
    rec.q = Parse(f->values[0], f->where, J);
    if (f->is_list) rec.rate = Parse(f->values[1], f->where, J);
    rec.has_initial = true;
  }
  // The quasi-velocities of the Boltzmann-Hamel form (joint_coordinates.cc):
  // a spherical joint's body-frame angular velocity, or its angles' rates.
  if (const auto* f = Get(e, "quasi_velocities")) {
    const std::string v = f->values.empty() ? "" : f->values[0];
    if (type != "spherical")
      ThrowAt(f->where, J, fmt::format("a {} joint takes no 'quasi_velocities': its quasi-velocities are its rates", type),
              "quasi_velocities: on spherical joints", "quasi_velocities: " + v,
              "leave it out (docs/model-format.md, \"Quasi-velocities\")");
    if (f->is_list || (v != "body" && v != "rates"))
      ThrowAt(f->where, J, "'quasi_velocities' of a spherical joint is body or rates",
              "quasi_velocities: body (body2's angular velocity components), or rates (the Cardan angles' rates)",
              f->is_list ? "a list" : v);
  }
  joints_.push_back(rec);
}

}  // namespace paynter::multibody
