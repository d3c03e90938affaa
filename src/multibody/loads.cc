// Loads of a `multibody:` section: forces and torques with world components
// on a body, and point-to-point springs and dampers between two bodies
// (docs/multibody.md, "Loads").
#include <fmt/format.h>
#include <ginac/ginac.h>

#include "expander.h"

namespace paynter::multibody {

// A force with world components F at point r (body frame) of body b: its
// components on the velocity junctions, its moment r x R^T F on the
// angular velocity junctions (power F . (v_G + R (w x r))).
void Expander::ApplyForce(const std::string& L, const Body& b, const Vec& r, const Vec& F) {
  if (b.ground) return;
  for (int i = 0; i < 3; ++i)
    if (!F[i].is_zero()) {
      const std::string s = fmt::format("{}_{}_{}", L, b.name, kAxes[i]);
      Element(s, "MSe", "effort").law_value = F[i];
      BondTo(s, fmt::format("{}_v{}", b.name, kAxes[i]));
    }
  const Vec tau = Cross(r, MulT(b.R, F));
  for (int i = 0; i < 3; ++i)
    if (!tau[i].expand().is_zero()) {
      const std::string s = fmt::format("{}_{}_t{}", L, b.name, kAxes[i]);
      Element(s, "MSe", "effort").law_value = tau[i];
      BondTo(s, fmt::format("{}_w{}", b.name, kAxes[i]));
    }
}

// A point-to-point spring and damper: force -(K (L - L0) + c dL/dt) e on
// body2's point, the opposite on body1's, e the unit vector from point1 to point2.
void Expander::AddSpring(const ModelSpec::Entry& e, const std::string& L) {
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

void Expander::AddLoad(const ModelSpec::Entry& e) {
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
        Element(s, "MSe", "effort").law_value = value[i];
        BondTo(s, fmt::format("{}_v{}", b.name, kAxes[i]));
      }
    torque_B = Cross(VectorOr(e, "point", L, {0, 0, 0}), MulT(b.R, value));
  } else {
    torque_B = MulT(b.R, value);
  }
  for (int i = 0; i < 3; ++i)
    if (!torque_B[i].expand().is_zero()) {
      const std::string s = fmt::format("{}_t{}", L, kAxes[i]);
      Element(s, "MSe", "effort").law_value = torque_B[i];
      BondTo(s, fmt::format("{}_w{}", b.name, kAxes[i]));
    }
}

}  // namespace paynter::multibody
