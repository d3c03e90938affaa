#!/usr/bin/env python3
"""Writes an N-link spatial pendulum (the scale benchmark) as a paynter model.

N uniform rods of length L = 1 m and mass 1 kg hang from the ground in a
chain of revolute joints J1 ... JN: J1 joins the ground to link 1 at the
origin, Ji joins the tip of link i-1 to the root of link i. The axes
alternate between z and y (in the parent's frame), so the chain moves in
space. At the start every link lies along +x at rest, except that each
joint about y turns at w0; gravity is 9.81 m/s^2 along -y.

N bodies, N revolute joints: a tree, 5 N constraint equations on 6 N
coordinates, none redundant, N degrees of freedom.

Usage: python3 examples/make_chain.py N [-o chain.yaml]
Python 3 standard library only.
"""
import argparse


def model(n):
    out = []
    w = out.append
    w(f"# An N-link spatial pendulum with N = {n}: written by examples/make_chain.py")
    w("# (which describes it); regenerate rather than edit:")
    w("#   python3 examples/make_chain.py N -o FILE")
    w(f"name: chain_{n}")
    w("parameters:")
    w("  L: 1          # length of every link [m]")
    w("  m: 1          # mass of every link [kg]")
    w("  r: 0.01       # radius of the rods [m]")
    w("  g: 9.81       # gravity along -y [m/s^2]")
    w("  w0: 0.5       # initial rate of the joints about y [rad/s]")
    w("  Ia: m*r^2/2   # central inertia of a rod about its axis [kg m^2]")
    w("  It: m*L^2/12  # central inertia of a rod across it [kg m^2]")
    w("multibody:")
    w("  gravity: [0, -g, 0]")
    w("  bodies:")
    for i in range(1, n + 1):
        w(f"    - {{name: B{i}, mass: m, inertia: [Ia, It, It], position: [({i} - 0.5)*L, 0, 0]}}")
    w("  joints:")
    for i in range(1, n + 1):
        parent = "ground" if i == 1 else f"B{i - 1}"
        point1 = "[0, 0, 0]" if i == 1 else "[L/2, 0, 0]"
        axis = "[0, 0, 1]" if i % 2 == 1 else "[0, 1, 0]"
        initial = "" if i % 2 == 1 else ", initial: [0, w0]"
        w(f"    - {{name: J{i}, type: revolute, body1: {parent}, body2: B{i}, axis: {axis},"
          f" point1: {point1}, point2: [-L/2, 0, 0]{initial}}}")
    w("outputs:")
    w("  q1: J1_angle")
    w(f"  qN: J{n}_angle")
    w(f"  xN: B{n}_x")
    w(f"  yN: B{n}_y")
    w(f"  zN: B{n}_z")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", type=int, help="number of links (>= 1)")
    ap.add_argument("-o", "--output", help="output file (default: standard output)")
    args = ap.parse_args()
    if args.n < 1:
        ap.error("N must be at least 1")
    text = model(args.n)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        print(text, end="")


if __name__ == "__main__":
    main()
