// src/solvers/butcher_c.cc — writes the Runge–Kutta tables of butcher_tables.h
// as a C99 header, for the C that paynter emits and that integrates by itself
// (the FMU runtime, src/fmi/runtime/fmu.c): the build runs this program, so
// the solvers and the FMUs read one table. Each coefficient is printed with
// 17 significant digits, which reads back as the same double.
//
// Usage: butcher_c OUTPUT.h
#include <cstdio>
#include <string>

#include "butcher_tables.h"

namespace {

using paynter::internal::kClassicRK4;
using paynter::internal::kDormandPrince54;

std::string Number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string Row(const double* v, int n) {
  std::string s = "{";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + Number(v[i]);
  return s + "}";
}

template <int kRows, int kCols>
std::string Matrix(const double (&m)[kRows][kCols]) {
  std::string s = "{";
  for (int i = 0; i < kRows; ++i) s += std::string(i ? ",\n    " : "\n    ") + Row(m[i], kCols);
  return s + "}";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: butcher_c OUTPUT.h\n");
    return 2;
  }
  const auto& dp = kDormandPrince54;
  const auto& rk = kClassicRK4;
  constexpr int kDp = paynter::internal::DormandPrince54Table::kStages;
  constexpr int kRk = paynter::internal::ClassicRK4Table::kStages;
  std::string h =
      "/* pn_butcher.h: the Runge-Kutta tables of paynter's solvers (src/solvers/butcher_tables.h), written\n"
      "   as C by the build (src/solvers/butcher_c.cc); do not edit. */\n"
      "#ifndef PN_BUTCHER_H\n#define PN_BUTCHER_H\n\n";
  h += "/* Dormand-Prince 5(4): nodes c, stages a, 5th-order weights b, error weights e = b - b_hat,\n"
       "   and the 4th-order continuous extension: the weight of stage j at theta is\n"
       "   theta * (dense[j][0] + theta * (dense[j][1] + theta * (dense[j][2] + theta * dense[j][3]))). */\n";
  h += "#define PN_DP54_STAGES " + std::to_string(kDp) + "\n";
  h += "static const double pn_dp54_c[" + std::to_string(kDp) + "] = " + Row(dp.c, kDp) + ";\n";
  h += "static const double pn_dp54_a[" + std::to_string(kDp) + "][" + std::to_string(kDp) + "] = " + Matrix(dp.a) +
       ";\n";
  h += "static const double pn_dp54_b[" + std::to_string(kDp) + "] = " + Row(dp.b, kDp) + ";\n";
  h += "static const double pn_dp54_e[" + std::to_string(kDp) + "] = " + Row(dp.e, kDp) + ";\n";
  h += "static const double pn_dp54_dense[" + std::to_string(kDp) + "][4] = " + Matrix(dp.dense) + ";\n\n";
  h += "/* classical Runge-Kutta */\n";
  h += "#define PN_RK4_STAGES " + std::to_string(kRk) + "\n";
  h += "static const double pn_rk4_c[" + std::to_string(kRk) + "] = " + Row(rk.c, kRk) + ";\n";
  h += "static const double pn_rk4_a[" + std::to_string(kRk) + "][" + std::to_string(kRk) + "] = " + Matrix(rk.a) +
       ";\n";
  h += "static const double pn_rk4_b[" + std::to_string(kRk) + "] = " + Row(rk.b, kRk) + ";\n\n#endif\n";
  FILE* f = std::fopen(argv[1], "wb");
  if (!f || std::fwrite(h.data(), 1, h.size(), f) != h.size() || std::fclose(f) != 0) {
    std::fprintf(stderr, "butcher_c: cannot write %s\n", argv[1]);
    return 1;
  }
  return 0;
}
