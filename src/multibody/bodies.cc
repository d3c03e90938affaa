// Bodies of a `multibody:` section: each rigid body is Newton–Euler —
// translation of its centre of mass in the world frame, rotation in its body
// frame with the Euler junction structure — with its orientation as a
// quaternion or Cardan angles and R_WB as definitions (docs/multibody.md).
#include <fmt/format.h>
#include <ginac/ginac.h>

#include <cmath>

#include "expander.h"

namespace paynter::multibody {
namespace {

// True for a number below zero (a text with parameters is checked by
// BuildModel, once their values are known).
bool Negative(const ex& v) {
  const ex n = GiNaC::evalf(v);
  return GiNaC::is_a<GiNaC::numeric>(n) && GiNaC::ex_to<GiNaC::numeric>(n).is_real() &&
         GiNaC::ex_to<GiNaC::numeric>(n).to_double() < 0;
}

// Eigen-decomposition of a symmetric positive definite 3x3 matrix (Jacobi
// rotations; small and exact enough for an inertia tensor).
void Principal(const double J[3][3], std::array<std::array<double, 3>, 3>* V, std::array<double, 3>* D,
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

Mat Cardan(const ex& a, const ex& b, const ex& g) {
  // R = Rx(a) Ry(b) Rz(g) (seed 003, Fig. 3).
  using GiNaC::cos;
  using GiNaC::sin;
  Mat m;
  m[0] = {cos(b) * cos(g), -cos(b) * sin(g), sin(b)};
  m[1] = {cos(g) * sin(a) * sin(b) + cos(a) * sin(g), cos(a) * cos(g) - sin(a) * sin(b) * sin(g), -cos(b) * sin(a)};
  m[2] = {sin(a) * sin(g) - cos(a) * cos(g) * sin(b), cos(g) * sin(a) + cos(a) * sin(b) * sin(g), cos(a) * cos(b)};
  return m;
}

}  // namespace

Body Expander::Ground() {
  Body g;
  g.name = "ground";
  g.ground = true;
  g.R = g.R0 = Identity();
  g.p = g.p0 = g.v = g.w = {0, 0, 0};
  return g;
}

const Body& Expander::FindBody(const std::string& name, const SourceLocation& where, const std::string& who) {
  for (const auto& b : bodies_)
    if (b.name == name) return b;
  std::string list;
  for (const auto& b : bodies_) list += (list.empty() ? "" : ", ") + b.name;
  ThrowAt(where, who, fmt::format("unknown body '{}'", name), "one of: " + list, name);
}

void Expander::AddBody(const ModelSpec::Entry& e) {
  Body b;
  b.name = Name(e, "body");
  b.where = where_ = e.where;
  CheckKeys(e, b.name, {"name", "mass", "inertia", "position", "orientation", "velocity", "angular_velocity"});
  if (b.name == "ground") ThrowAt(e.where, b.name, "'ground' is the fixed frame's name", "another body name", "ground");
  for (const auto& o : bodies_)
    if (o.name == b.name)
      ThrowAt(e.where, b.name, fmt::format("duplicate body '{}'", b.name), "each body once", b.name,
              fmt::format("the first is at {}; a submodel's bodies are named by its instance's path (arm.link)",
                          o.where.ToString()));
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
    Element(fmt::format("{}_m{}", n, kAxes[i]), "I", "inertance", mass).initial_value = m * v0[i];
    BondTo(j, fmt::format("{}_m{}", n, kAxes[i]));
    // The weight, also when it is zero: it keeps every junction two-bonded
    // for a free body.
    Element(fmt::format("{}_weight_{}", n, kAxes[i]), "Se", "effort").law_value = m * gravity_[i];
    BondTo(fmt::format("{}_weight_{}", n, kAxes[i]), j);
    Displacement(fmt::format("{}_{}", n, kAxes[i]), j, 0, b.p0[i]);
    b.p[i] = Sym(fmt::format("{}_{}", n, kAxes[i]));
    b.v[i] = Sym("f_" + j);
  }
  // Rotation, body frame, with the Euler junction structure: a gyrator ring
  // modulated by the angular momenta h = p of the three I elements.
  Vec h;  // angular momentum components in B
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
      Element(fmt::format("{}_J{}", n, kAxes[i]), "I", "inertance", inertia->values[i]).initial_value = I * w0[i];
      BondTo(j, fmt::format("{}_J{}", n, kAxes[i]));
      b.w[i] = Sym("f_" + j);
      h[i] = Sym(fmt::format("p_{}_J{}", n, kAxes[i]));
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
      Element(I, "I", "inertance", fmt::format("{:.17g}", D[k])).initial_value = pi0;
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
      h[i] = 0;
      for (int k = 0; k < 3; ++k)
        if (std::abs(V[i][k]) >= 1e-15) h[i] += V[i][k] * Sym(fmt::format("p_{}_J{}", n, k + 1));
    }
  }
  for (int i = 0; i < 3; ++i) Define(fmt::format("{}_h{}", n, kAxes[i]), h[i]);
  // d h_i/dt = T_i - (w x h)_i: MGY h_z from w_x to w_y, h_x from w_y to w_z,
  // h_y from w_z to w_x (seed 004, Fig. 9.36b).
  for (int i = 0; i < 3; ++i) {
    const int a = (i + 1) % 3, c = (i + 2) % 3;  // the gyrator of h_i joins w_a -> w_c
    const std::string gy = fmt::format("{}_ejs_{}", n, kAxes[i]);
    Element(gy, "MGY", "ratio").law_value = h[i];
    BondTo(fmt::format("{}_w{}", n, kAxes[a]), gy);
    BondTo(gy, fmt::format("{}_w{}", n, kAxes[c]));
  }
  // Orientation.
  const ex wx = b.w[0], wy = b.w[1], wz = b.w[2];
  using GiNaC::cos;
  using GiNaC::sin;
  if (cardan_) {
    const ex a = Sym(n + "_a"), bb = Sym(n + "_b"), g = Sym(n + "_g");
    Displacement(n + "_a", "", (wx * cos(g) - wy * sin(g)) / cos(bb), ang[0]);
    Displacement(n + "_b", "", wx * sin(g) + wy * cos(g), ang[1]);
    Displacement(n + "_g", "", wz - (wx * cos(g) - wy * sin(g)) * GiNaC::tan(bb), ang[2]);
    b.R = Cardan(a, bb, g);
  } else {
    // q' = q (x) (0, w_B) / 2; R from the normalized quaternion.
    const ex ca = cos(ang[0] / 2), sa = sin(ang[0] / 2), cb = cos(ang[1] / 2), sb = sin(ang[1] / 2),
             cg = cos(ang[2] / 2), sg = sin(ang[2] / 2);
    // q = qx(a) (x) qy(b) (x) qz(g)
    const ex q0i = ca * cb * cg - sa * sb * sg, q1i = sa * cb * cg + ca * sb * sg, q2i = ca * sb * cg - sa * cb * sg,
             q3i = ca * cb * sg + sa * sb * cg;
    const ex a = Sym(n + "_q0"), x = Sym(n + "_q1"), y = Sym(n + "_q2"), z = Sym(n + "_q3");
    Displacement(n + "_q0", "", -(x * wx + y * wy + z * wz) / 2, q0i);
    Displacement(n + "_q1", "", (a * wx + y * wz - z * wy) / 2, q1i);
    Displacement(n + "_q2", "", (a * wy + z * wx - x * wz) / 2, q2i);
    Displacement(n + "_q3", "", (a * wz + x * wy - y * wx) / 2, q3i);
    const ex n2 = a * a + x * x + y * y + z * z;
    Mat R;
    R[0] = {(a * a + x * x - y * y - z * z) / n2, 2 * (x * y - a * z) / n2, 2 * (x * z + a * y) / n2};
    R[1] = {2 * (x * y + a * z) / n2, (a * a - x * x + y * y - z * z) / n2, 2 * (y * z - a * x) / n2};
    R[2] = {2 * (x * z - a * y) / n2, 2 * (y * z + a * x) / n2, (a * a - x * x - y * y + z * z) / n2};
    b.R = R;
  }
  // R_WB as definitions <B>_R11 .. <B>_R33, used below and in outputs, with
  // their rates dR/dt = R [w]x (w in B): the orientation states' rates above
  // are made so (the quaternion's norm is constant along them), and these few
  // products replace the chain rule through the orientation states (for the
  // normalized quaternion, quotients of quartics) wherever a joint's lever
  // arms or axes are differentiated.
  Mat Rs;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) Rs[i][j] = Sym(fmt::format("{}_R{}{}", n, i + 1, j + 1));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const int j1 = (j + 1) % 3, j2 = (j + 2) % 3;  // (R [w]x)_ij = R_i,j1 w_j2 - R_i,j2 w_j1
      Define(fmt::format("{}_R{}{}", n, i + 1, j + 1), b.R[i][j], Rs[i][j1] * b.w[j2] - Rs[i][j2] * b.w[j1]);
    }
  b.R = Rs;
  bodies_.push_back(b);
}

}  // namespace paynter::multibody
