#!/usr/bin/env python3
"""Writes examples/bricard.yaml: a line-symmetric Bricard 6R linkage.

Six links in a closed loop of six revolute joints; link 6 is the ground, so
five bodies move. Grübler-Kutzbach counts 6 x 5 - 6 x 5 = 0 degrees of
freedom, yet the linkage moves with one: one of its 30 joint constraints is
redundant at every configuration.

Geometry, in Denavit-Hartenberg terms: the frame of link i is
F_i = F_{i-1} Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i), F_0 = F_6 = the world;
joint i turns link i about the z axis of F_{i-1}. The loop closes when
T_1 ... T_6 = I. Bricard's line-symmetric case takes
    a_{i+3} = a_i,  alpha_{i+3} = alpha_i,  d_{i+3} = d_i   (i = 1, 2, 3).
With theta_{i+3} = theta_i as well, the loop closes as soon as
H = T_1 T_2 T_3 satisfies H H = I, i.e. H is a half-turn about a line: its
rotation is symmetric with trace -1 and its translation is perpendicular to
the line. That is two equations in theta_1, theta_2, theta_3: a one-parameter
family of closed configurations. This script fixes theta_1, solves the two
equations for theta_2, theta_3 by Newton's method, checks the closure of the
whole loop, and writes the bodies at that configuration.

Each body's frame is parallel to the world at the start (orientation zero),
with its origin at the middle of the link's common normal; joint i sits at
the origin of F_{i-1}, on its axis. The bodies have equal masses and
isotropic inertias: the example is about the loop, not about rods.

Usage: python3 examples/make_bricard.py [-o examples/bricard.yaml]
Python 3 standard library only.
"""
import argparse
import math

# Link lengths a, twists alpha, offsets d of links 1-3 (repeated for 4-6).
A = [0.5, 0.7, 0.6]
ALPHA = [math.pi / 2, math.pi / 3, 2 * math.pi / 5]
D = [0.0, 0.1, -0.05]
THETA1 = 0.8           # the start's first joint angle [rad]
GUESS = (-1.0, -3.0)   # Newton's start for theta_2, theta_3 (picks the branch)


def mul(p, q):
    return [[sum(p[i][k] * q[k][j] for k in range(4)) for j in range(4)] for i in range(4)]


def dh(theta, d, a, alpha):
    ct, st, ca, sa = math.cos(theta), math.sin(theta), math.cos(alpha), math.sin(alpha)
    return [[ct, -st * ca, st * sa, a * ct], [st, ct * ca, -ct * sa, a * st], [0, sa, ca, d], [0, 0, 0, 1]]


def identity():
    return [[float(i == j) for j in range(4)] for i in range(4)]


def chain(thetas):
    """F_0 ... F_n for the joint angles given (links repeat with period 3)."""
    frames = [identity()]
    for i, th in enumerate(thetas):
        frames.append(mul(frames[-1], dh(th, D[i % 3], A[i % 3], ALPHA[i % 3])))
    return frames


def half_turn_residual(th2, th3):
    """Two equations whose roots make H = T1 T2 T3 a half-turn about a line."""
    h = chain([THETA1, th2, th3])[-1]
    # Estimate of the half-turn's axis n from R + I = 2 n n^T (its largest column).
    r = [[h[i][j] + (i == j) for j in range(3)] for i in range(3)]
    k = max(range(3), key=lambda i: r[i][i])
    n = [r[i][k] for i in range(3)]
    s = math.sqrt(sum(x * x for x in n))
    n = [x / s for x in n]
    # The rotation's skew part along n (zero for a half-turn), and n . t.
    w = [h[2][1] - h[1][2], h[0][2] - h[2][0], h[1][0] - h[0][1]]
    return [sum(n[i] * w[i] for i in range(3)), sum(n[i] * h[i][3] for i in range(3))]


def solve_start():
    x = list(GUESS)
    for _ in range(100):
        f = half_turn_residual(*x)
        eps = 1e-7
        cols = []
        for j in range(2):
            y = list(x)
            y[j] += eps
            g = half_turn_residual(*y)
            cols.append([(g[i] - f[i]) / eps for i in range(2)])
        a, c = cols[0]
        b, d = cols[1]
        det = a * d - b * c
        dx = [(d * f[0] - b * f[1]) / det, (-c * f[0] + a * f[1]) / det]
        x = [x[0] - dx[0], x[1] - dx[1]]
        if abs(dx[0]) + abs(dx[1]) < 1e-15:
            break
    return [THETA1, x[0], x[1]] * 2


def num(v):
    return repr(float(v)) if abs(v) > 1e-15 else "0"


def vec(v):
    return "[" + ", ".join(num(x) for x in v) + "]"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", default="examples/bricard.yaml")
    args = ap.parse_args()
    thetas = solve_start()
    frames = chain(thetas)
    closure = max(abs(frames[6][i][j] - (i == j)) for i in range(3) for j in range(4))
    if closure > 1e-12:
        raise SystemExit(f"the loop does not close: {closure:.3g}")
    origin = [[f[i][3] for i in range(3)] for f in frames]
    zaxis = [[f[i][2] for i in range(3)] for f in frames]
    # Body i (link i, i = 1..5): centre at the middle of its common normal,
    # from the foot on joint i's axis (o_{i-1} + d_i z_{i-1}) to o_i.
    centre = {}
    for i in range(1, 6):
        foot = [origin[i - 1][k] + D[(i - 1) % 3] * zaxis[i - 1][k] for k in range(3)]
        centre[i] = [(foot[k] + origin[i][k]) / 2 for k in range(3)]
    out = []
    w = out.append
    w("# A line-symmetric Bricard 6R linkage: written by examples/make_bricard.py")
    w("# (which explains the geometry); regenerate rather than edit.")
    w("# Six links in a closed loop of six revolute joints, link 6 the ground:")
    w("# 5 bodies, 30 coordinates, 30 joint constraints. Grubler-Kutzbach gives 0")
    w("# degrees of freedom; the linkage has 1, and `paynter check` finds one")
    w("# constraint redundant. It moves under gravity (along -z) from rest.")
    w("# Denavit-Hartenberg parameters of links 1-3 (links 4-6 repeat them):")
    w(f"#   a = {A}, alpha = {[round(x, 12) for x in ALPHA]}, d = {D}")
    w("# Start: theta = [" + ", ".join(f"{t:.15g}" for t in thetas) + "]")
    w("# (J<i>_angle is the change of theta_i since the start; the motion keeps")
    w("# theta_4 = theta_1, theta_5 = theta_2, theta_6 = theta_3.)")
    w("name: bricard")
    w("parameters:")
    w("  m: 1        # mass of each link [kg]")
    w("  J: 0.05     # central inertia of each link, about any axis [kg m^2]")
    w("  g: 9.81     # gravity along -z [m/s^2]")
    for i, t in enumerate(thetas):
        w(f"  theta{i + 1}: {t!r}")
    w("multibody:")
    w("  gravity: [0, 0, -g]")
    w("  bodies:")
    for i in range(1, 6):
        w(f"    - {{name: L{i}, mass: m, inertia: [J, J, J], position: {vec(centre[i])}}}")
    w("  joints:")
    for j in range(1, 7):
        p = origin[j - 1]
        b1 = "ground" if j == 1 else f"L{j - 1}"
        b2 = "ground" if j == 6 else f"L{j}"
        pts = []
        if b1 != "ground":
            pts.append(f"point1: {vec([p[k] - centre[j - 1][k] for k in range(3)])}")
        else:
            pts.append(f"point1: {vec(p)}")
        if b2 != "ground":
            pts.append(f"point2: {vec([p[k] - centre[j][k] for k in range(3)])}")
        else:
            pts.append(f"point2: {vec(p)}")
        w(f"    - {{name: J{j}, type: revolute, body1: {b1}, body2: {b2}, axis: {vec(zaxis[j - 1])},")
        w(f"       {', '.join(pts)}}}")
    w("outputs:")
    for j in range(1, 7):
        w(f"  theta{j}: theta{j} + J{j}_angle")
    for i in range(1, 6):
        w(f"  L{i}_vx: f_L{i}_vx")
        w(f"  L{i}_vy: f_L{i}_vy")
        w(f"  L{i}_vz: f_L{i}_vz")
        w(f"  L{i}_wx: f_L{i}_wx")
        w(f"  L{i}_wy: f_L{i}_wy")
        w(f"  L{i}_wz: f_L{i}_wz")
        w(f"  L{i}_z: L{i}_z")
    with open(args.output, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
