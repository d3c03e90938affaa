// The classical forms print as a textbook writes them (issue 19, part 4):
// B1 (the bond graph and the multibody pendulum), the planar double
// pendulum and B3, the quick return mechanism of seed 000, line by line.
// Before textbook.cc, B1 in 3D printed
//   M[1,1] = 1/4*L^2*M*cos(pivot_angle)^2+I0+M*bar_vx_pivot_angle^2
// with bar_vx_pivot_angle = -1/2*L*sin(pivot_angle) under "where".
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "paynter/run.h"
#include "test_paths.h"

namespace paynter {
namespace {

std::string Equations(const std::string& example, const std::string& form, bool latex = false) {
  std::ostringstream out;
  EquationsText(std::string(PAYNTER_SOURCE_DIR) + "/examples/" + example, latex, ParseFormulation(form), false,
                ConstraintMethod::kAuto, out, false);
  return out.str();
}

// The lines of `text` from the one starting with `first` to the one before `stop`.
std::string Lines(const std::string& text, const std::string& first, const std::string& stop) {
  const size_t a = text.find(first);
  if (a == std::string::npos) return "(no line " + first + ")";
  const size_t b = text.find(stop, a);
  return text.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

TEST(Textbook, PendulumBondGraph) {
  // JA gamma'' = -B gamma' - M g L/2 cos(gamma): the lever L/2*cos(gamma) of
  // the MTF written out.
  const std::string t = Equations("B1_pendulum.yaml", "lagrange2");
  EXPECT_EQ(Lines(t, "  M[1,1]", "  d/dt"),
            "  M[1,1] = JA\n"
            "  f[1] = -1/2*L*M*cos(gamma)*g-B*v_pivot\n");
  EXPECT_EQ(t.find("where"), std::string::npos) << t;
}

TEST(Textbook, PendulumMultibody) {
  // The bar about its end: I0 + M L^2/4 (sin^2 + cos^2 = 1), the same
  // equation as the bond graph's.
  const std::string t = Equations("B1_pendulum_3d.yaml", "lagrange2");
  EXPECT_EQ(Lines(t, "  M[1,1]", "  d/dt"),
            "  M[1,1] = 1/4*L^2*M+I0\n"
            "  f[1] = -1/2*L*M*cos(pivot_angle)*g-B*v_pivot_angledot\n");
  EXPECT_EQ(t.find("where"), std::string::npos) << t;
  const std::string tex = Equations("B1_pendulum_3d.yaml", "lagrange2", true);
  EXPECT_NE(tex.find("M_{1,1} &= I_{0}+\\frac{1}{4}  L^{2} M \\\\\n"), std::string::npos) << tex;
}

TEST(Textbook, DoublePendulum) {
  // Two uniform bars, relative angle theta2 (e.g. Spong, Hutchinson and
  // Vidyasagar, "Robot Modeling and Control", sec. 7.3 with lc = L/2):
  //   M11 = m1 L1^2/4 + m2 (L1^2 + L2^2/4 + L1 L2 cos th2) + I1 + I2
  //   M12 = m2 (L2^2/4 + L1 L2/2 cos th2) + I2,  M22 = m2 L2^2/4 + I2
  //   f1 = m2 L1 L2/2 sin th2 (2 th1' th2' + th2'^2)
  //        - (m1/2 + m2) g L1 cos th1 - m2 g L2/2 cos(th1 + th2)
  //   f2 = -m2 L1 L2/2 sin th2 th1'^2 - m2 g L2/2 cos(th1 + th2)
  // each body's terms gathered (m2 (...), m1 (...)), angle sums combined.
  const std::string t = Equations("double_pendulum.yaml", "lagrange2");
  EXPECT_EQ(Lines(t, "  M[1,1]", "  d/dt"),
            "  M[1,1] = 1/4*(4*L1*L2*cos(theta2_angle)+4*L1^2+L2^2)*m2+1/4*L1^2*m1+I1+I2\n"
            "  M[1,2] = 1/4*(2*L1*L2*cos(theta2_angle)+L2^2)*m2+I2\n"
            "  f[1] = 1/2*(2*L1*L2*sin(theta2_angle)*v_theta1_angledot*v_theta2_angledot-2*L1*cos(theta1_angle)*g+"
            "L1*L2*sin(theta2_angle)*v_theta2_angledot^2-L2*cos(theta1_angle+theta2_angle)*g)*m2-"
            "1/2*L1*cos(theta1_angle)*g*m1\n"
            "  M[2,1] = 1/4*(2*L1*L2*cos(theta2_angle)+L2^2)*m2+I2\n"
            "  M[2,2] = 1/4*L2^2*m2+I2\n"
            "  f[2] = -1/2*(L1*L2*sin(theta2_angle)*v_theta1_angledot^2+L2*cos(theta1_angle+theta2_angle)*g)*m2\n");
}

TEST(Textbook, QuickReturnAsSeed000) {
  // Seed 000, eq. 35: b* = J1 + m (t1 t7)^2 - ... + J2 t7^2 + J3 (t6 t7 / t5)^2,
  // in the moduli t_i (kept as names: written out they divide by cos(theta3)
  // and the slider's length), each link's terms gathered by its mass.
  const std::string t = Equations("B3_quick_return.yaml", "lagrange2");
  EXPECT_EQ(Lines(t, "  M[1,1]", "  f[1]"),
            "  M[1,1] = J_1-(2*t1*t2*t5^(-1)*t6*t7^2+2*t3*t4*t5^(-1)*t6*t7^2-t1^2*t7^2-t2^2*t5^(-2)*t6^2*t7^2-t3^2*t7^2-"
            "t4^2*t5^(-2)*t6^2*t7^2)*m3-(2*t5^(-1)*t6*t7^2*t8*t9-t5^(-2)*t6^2*t7^2*t9^2-t7^2*t8^2)*m5+J_2*t7^2+"
            "J_3*t5^(-2)*t6^2*t7^2\n");
  // The generalized force of eq. 35: -(t9 t7 t6 / t5 - t7 t8) F + tau.
  const std::string f = Lines(t, "  f[1]", "  d/dt");
  EXPECT_NE(f.find("-F*t5^(-1)*t6*t7*t9+F*t7*t8"), std::string::npos) << f;
  EXPECT_NE(f.find("+tau\n"), std::string::npos) << f;
  EXPECT_NE(t.find("where\n  t1 = -l2*sin(theta2)\n"), std::string::npos) << t;
}

}  // namespace
}  // namespace paynter
