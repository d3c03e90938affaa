// Initial joint coordinates: when a joint of a `multibody:` section gives
// `initial:`, the bodies' initial poses and velocities follow from the joints'
// coordinates along the tree of joints from the ground (docs/multibody.md,
// "Joints").
#include <fmt/format.h>
#include <ginac/ginac.h>

#include <algorithm>
#include <cmath>

#include "expander.h"

namespace paynter::multibody {

// When a joint gives `initial:`, the bodies' initial poses and velocities
// are derived along the tree of joints from the ground (joints taken in the
// order written; a joint whose body2 is already placed closes a loop and is
// left to the assembly): each body follows its parent rigidly, then moves by
// its joint's coordinate (rotation about the axis through point1, or
// translation along it) and rate. The written poses are those of coordinate
// 0. Numbers, from the parameters' values.
void Expander::Propagate() {
  const GiNaC::exmap& values = Values();
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
      if (j.type->coordinate == Coordinate::kAngle) {
        const M3 Rq = rot(axis_w, q);
        V3 d{};
        for (int i = 0; i < 3; ++i) d[i] = pc[i] - pivot[i];
        const V3 dr = mul(Rq, d);
        for (int i = 0; i < 3; ++i) pc[i] = pivot[i] + dr[i];
        Rc = mmul(Rq, Rc);
        for (int i = 0; i < 3; ++i) wc[i] += qd * axis_w[i];
      } else if (j.type->coordinate == Coordinate::kSlide) {
        for (int i = 0; i < 3; ++i) pc[i] += q * axis_w[i];
      }
      V3 arm{};
      for (int i = 0; i < 3; ++i) arm[i] = pc[i] - p[a][i];
      const V3 wa_arm = cross(w[a], arm);
      for (int i = 0; i < 3; ++i) vc[i] += wa_arm[i];
      if (j.type->coordinate == Coordinate::kAngle) {
        V3 d{};
        for (int i = 0; i < 3; ++i) d[i] = pc[i] - pivot[i];
        const V3 t = cross(axis_w, d);
        for (int i = 0; i < 3; ++i) vc[i] += qd * t[i];
      } else if (j.type->coordinate == Coordinate::kSlide) {
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
      if (d.name == name) d.initial = fmt::format("{:.17g}", value), d.initial_value.reset();
  };
  auto set_momentum = [&](const std::string& name, double value) {
    for (auto& e : s_.elements)
      if (e.name == name) e.initial = fmt::format("{:.17g}", value), e.initial_value.reset();
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
    const double base = j.type->coordinate == Coordinate::kSlide ? num(j.s0, j.where, j.name) : 0.0;
    set_displacement(j.coordinate, base + num(j.q, j.where, j.name));
  }
}

}  // namespace paynter::multibody
