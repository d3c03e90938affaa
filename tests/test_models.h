// Bond graphs that several test files use, written once.
#pragma once

namespace paynter::testing {

// A series RLC circuit with named bonds: all storage integral under SCAP.
inline constexpr const char* kSeriesRlc = R"(
elements:
  - {name: V, kind: Se, effort: 1}
  - {name: J, kind: "1"}
  - {name: L, kind: I, inertance: 1}
  - {name: R, kind: R, resistance: 1}
  - {name: C, kind: C, capacitance: 1}
bonds:
  - {name: bV, from: V, to: J}
  - {name: bL, from: J, to: L}
  - {name: bR, from: J, to: R}
  - {name: bC, from: J, to: C}
)";

// Two flow sources on one 1-junction: a causal conflict.
inline constexpr const char* kTwoFlowSources = R"(
elements:
  - {name: S1, kind: Sf, flow: 1}
  - {name: S2, kind: Sf, flow: 2}
  - {name: J, kind: "1"}
  - {name: R, kind: R, resistance: 1}
bonds: [[S1, J], [S2, J], [J, R]]
)";

// Two inertias rigidly coupled through a gear (TF), torque on the first, damping
// on the second: one inertia in derivative causality. Closed form in models_test.
inline constexpr const char* kGearCoupledInertias = R"(
parameters: {tau: 1.5, J1: 0.2, J2: 0.7, n: 3, b: 0.4}
elements:
  - {name: T, kind: Se, effort: tau}
  - {name: w1, kind: "1"}
  - {name: I1, kind: I, inertance: J1}
  - {name: gear, kind: TF, ratio: n}
  - {name: w2, kind: "1"}
  - {name: I2, kind: I, inertance: J2}
  - {name: damper, kind: R, resistance: b}
bonds: [[T, w1], [w1, I1], [w1, gear], [gear, w2], [w2, I2], [w2, damper]]
)";

// A current source into a resistive network with one capacitor: a linear
// algebraic loop through r1 and r2 (the Thevenin solution is in models_test).
inline constexpr const char* kResistiveLoop = R"(
parameters: {I0: 2, R1: 1, R2: 2, R3: 3, C: 0.5}
elements:
  - {name: src, kind: Sf, flow: I0}
  - {name: a, kind: "0"}
  - {name: r1, kind: R, resistance: R1}
  - {name: s, kind: "1"}
  - {name: r2, kind: R, resistance: R2}
  - {name: c, kind: "0"}
  - {name: r3, kind: R, resistance: R3}
  - {name: cap, kind: C, capacitance: C}
bonds: [[src, a], [a, r1], [a, s], [s, r2], [s, c], [c, r3], [c, cap]]
)";

// B1 written with the bar's mass on the velocities of G through two MTFs: both
// I:M in derivative causality.
inline constexpr const char* kCartesianPendulum = R"(
parameters: {L: 1, M: 1, Izz: 0.083, B: 10, g: 9.81}
elements:
  - {name: pivot, kind: "1"}
  - {name: rot, kind: I, inertance: Izz}
  - {name: damper, kind: R, resistance: B}
  - {name: tx, kind: MTF, ratio: -L/2*sin(gamma)}
  - {name: vx, kind: "1"}
  - {name: mx, kind: I, inertance: M}
  - {name: ty, kind: MTF, ratio: L/2*cos(gamma)}
  - {name: vy, kind: "1"}
  - {name: my, kind: I, inertance: M}
  - {name: weight, kind: Se, effort: -M*g}
bonds: [[pivot, rot], [pivot, damper], [pivot, tx], [tx, vx], [vx, mx], [pivot, ty], [ty, vy], [vy, my], [weight, vy]]
displacements: [{name: gamma, of: pivot}]
)";

}  // namespace paynter::testing
