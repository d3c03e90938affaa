#!/usr/bin/env python3
"""Writes the IFToMM "N four-bar mechanism" benchmark as a paynter model.

N planar four-bar linkages in a row, each sharing its rocker with the next
one's crank: N + 1 vertical links V0 ... VN pivoted on the ground at
x = 0, L, ..., N L, and N horizontal links H1 ... HN joining the tops of
V(i-1) and Vi. Every link is a uniform rod of length L = 1 m and mass 1 kg;
gravity is 9.81 m/s^2 along -y. At the start the vertical links stand
upright (angle pi/2 from +x) and turn at 1 rad/s, the horizontal ones
translate. Each four-bar is a parallelogram, so all vertical links keep the
same angle phi and the horizontal links stay horizontal: the mechanism moves
as one pendulum, phi'' = -k cos(phi) with
    k = g ((N + 1)/2 + N) / ((N + 1)/3 + N)       (L = 1 m, equal masses),
and it passes through its singular configuration (every link along the x
axis) twice a turn, about every 0.72 s. There the linkage could switch to
the anti-parallelogram branch; the true motion does not.

The file carries the benchmark's run settings (20 s, lagrange-multipliers
with the energy projection, rtol 1e-8), which command-line options override.

Joints: N + 1 ground pivots G0 ... GN, and for each Hi a pin Pi at the top of
V(i-1) and a pin Qi at the top of Vi: 3N + 1 revolute joints about z. In 3D
that is 5 (3N + 1) constraint equations on 6 (2N + 1) coordinates, of rank
6 (2N + 1) - 1: 3N of them are redundant (out of the plane).

Usage: python3 examples/make_nfourbar.py N [-o examples/nfourbar.yaml]
Python 3 standard library only.
"""
import argparse


def model(n):
    out = []
    w = out.append
    w(f"# The IFToMM N four-bar benchmark with N = {n}: written by")
    w("# examples/make_nfourbar.py (which describes the mechanism); regenerate")
    w("# rather than edit:  python3 examples/make_nfourbar.py N -o FILE")
    w(f"# {2 * n + 1} bodies, {3 * n + 1} revolute joints; mobility 1, {3 * n} redundant")
    w("# constraint equations (out of the plane). Singular (all links aligned) twice")
    w("# a turn. `phi` is the first crank's angle from +x (unwrapped), `phi_last`")
    w("# the last rocker's; `h_first`, `h_last` the angles of the first and last")
    w("# horizontal links (0 on the true motion); `energy` kinetic plus potential.")
    w(f"name: nfourbar_{n}")
    w("parameters:")
    w("  L: 1          # length of every link [m]")
    w("  m: 1          # mass of every link [kg]")
    w("  r: 0.01       # radius of the rods [m] (inertia about their own axis)")
    w("  g: 9.81       # gravity along -y [m/s^2]")
    w("  w0: 1         # initial angular velocity of the vertical links [rad/s]")
    w("  Ia: m*r^2/2   # central inertia of a rod about its axis [kg m^2]")
    w("  It: m*L^2/12  # central inertia of a rod across it [kg m^2]")
    w("multibody:")
    w("  gravity: [0, -g, 0]")
    w("  bodies:")
    # Body frames: x along the link (V: upwards, from the pivot to the top;
    # H: from V(i-1) to Vi).
    for i in range(n + 1):
        w(f"    - {{name: V{i}, mass: m, inertia: [Ia, It, It], position: [{i}*L, L/2, 0],"
          f" orientation: [0, 0, pi/2], velocity: [-w0*L/2, 0, 0], angular_velocity: [0, 0, w0]}}")
    for i in range(1, n + 1):
        w(f"    - {{name: H{i}, mass: m, inertia: [Ia, It, It], position: [({i} - 0.5)*L, L, 0],"
          f" velocity: [-w0*L, 0, 0]}}")
    w("  joints:")
    for i in range(n + 1):
        w(f"    - {{name: G{i}, type: revolute, body1: ground, body2: V{i}, axis: [0, 0, 1],"
          f" point1: [{i}*L, 0, 0], point2: [-L/2, 0, 0]}}")
    for i in range(1, n + 1):
        w(f"    - {{name: P{i}, type: revolute, body1: V{i - 1}, body2: H{i}, axis: [0, 0, 1],"
          f" point1: [L/2, 0, 0], point2: [-L/2, 0, 0]}}")
        w(f"    - {{name: Q{i}, type: revolute, body1: V{i}, body2: H{i}, axis: [0, 0, 1],"
          f" point1: [L/2, 0, 0], point2: [L/2, 0, 0]}}")
    w("outputs:")
    w("  phi: pi/2 + G0_angle")
    w(f"  phi_last: pi/2 + G{n}_angle")
    w("  phidot: f_V0_wz")
    w("  h_first: atan2(H1_R21, H1_R11)")
    w(f"  h_last: atan2(H{n}_R21, H{n}_R11)")
    terms = []
    for b in [f"V{i}" for i in range(n + 1)] + [f"H{i}" for i in range(1, n + 1)]:
        terms.append(f"m*(f_{b}_vx^2 + f_{b}_vy^2)/2 + It*f_{b}_wz^2/2 + m*g*{b}_y")
    w("  energy: " + " + ".join(terms))
    # The benchmark's run: 20 s; lagrange-multipliers passes the singular
    # configurations, and the energy projection keeps each crossing from
    # losing energy (docs/constraints.md, "Energy projection").
    w("simulation:")
    w("  t_end: 20")
    w("  constraints: lagrange-multipliers")
    w("  project_energy: true")
    w("  rtol: 1e-8")
    w("  atol: 1e-10")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description="Writes the IFToMM N four-bar benchmark as a paynter model.")
    ap.add_argument("n", type=int, help="number of four-bars (>= 1)")
    ap.add_argument("-o", "--output", default="examples/nfourbar.yaml")
    args = ap.parse_args()
    if args.n < 1:
        raise SystemExit("N must be at least 1")
    with open(args.output, "w") as f:
        f.write(model(args.n))


if __name__ == "__main__":
    main()
