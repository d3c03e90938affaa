// src/multibody/vec3.h — 3-vectors and 3x3 matrices of GiNaC expressions, for
// the multibody expansion (bodies.cc, joints.cc, loads.cc). Internal header.
#pragma once

#include <ginac/ginac.h>

#include <array>
#include <sstream>
#include <string>

namespace paynter::multibody {

using GiNaC::ex;
using Vec = std::array<ex, 3>;
using Mat = std::array<std::array<ex, 3>, 3>;

// The component names of a vector, in element and variable names (<B>_vx ...).
inline constexpr const char* kAxes[3] = {"x", "y", "z"};

// An expression as the text a model file would hold (GiNaC's printing).
inline std::string Text(const ex& e) {
  std::ostringstream os;
  os << e;
  return os.str();
}

inline Vec Cross(const Vec& a, const Vec& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
inline ex Dot(const Vec& a, const Vec& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
// m v
inline Vec Mul(const Mat& m, const Vec& v) {
  Vec r;
  for (int i = 0; i < 3; ++i) r[i] = m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2];
  return r;
}
// m^T v
inline Vec MulT(const Mat& m, const Vec& v) {
  Vec r;
  for (int i = 0; i < 3; ++i) r[i] = m[0][i] * v[0] + m[1][i] * v[1] + m[2][i] * v[2];
  return r;
}
inline Vec Sub(const Vec& a, const Vec& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
inline Vec Add(const Vec& a, const Vec& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
inline Mat Identity() {
  Mat m;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) m[i][j] = i == j ? 1 : 0;
  return m;
}

}  // namespace paynter::multibody
