#!/usr/bin/env python3
"""Writes a chain of N masses joined by springs as a scalar bond graph (the
large scalar benchmark of docs/performance.md).

Mass i is the 1-junction vi with an I element (inertance m) and a damper to
ground (R, resistance c); the spring between masses i-1 and i is the
0-junction si with a C element (stiffness k), bonded vi-1 -> si -> vi. A
constant force F pushes the first mass (with --sine, F sin(2 pi f t)). Five
bonds per mass: N = 2000 gives 10,000 bonds, N = 20000 100,000.

Usage: python3 bench/make_mass_spring.py N [--sine] [-o chain.yaml]
Python 3 standard library only.
"""
import argparse


def model(n, sine=False):
    out = []
    w = out.append
    w(f"# A chain of {n} masses and springs: written by bench/make_mass_spring.py; regenerate rather than edit.")
    w(f"name: mass_spring_{n}")
    w("parameters:")
    w("  m: 1     # mass [kg]")
    w("  k: 100   # stiffness [N/m]")
    w("  c: 0.5   # damping to ground [N s/m]")
    w("  F: 1     # force on the first mass [N]")
    if sine:
        w("  f: 2     # frequency of the force [Hz]")
    w("elements:")
    w("  - {name: force, kind: Se, effort: " + ("F*sin(2*pi*f*t)" if sine else "F") + "}")
    for i in range(1, n + 1):
        w(f"  - {{name: v{i}, kind: \"1\"}}")
        w(f"  - {{name: mass{i}, kind: I, inertance: m}}")
        w(f"  - {{name: damper{i}, kind: R, resistance: c}}")
        if i > 1:
            w(f"  - {{name: s{i}, kind: \"0\"}}")
            w(f"  - {{name: spring{i}, kind: C, stiffness: k}}")
    w("bonds:")
    w("  - [force, v1]")
    for i in range(1, n + 1):
        w(f"  - [v{i}, mass{i}]")
        w(f"  - [v{i}, damper{i}]")
        if i > 1:
            w(f"  - [v{i - 1}, s{i}]")
            w(f"  - [s{i}, v{i}]")
            w(f"  - [s{i}, spring{i}]")
    w("outputs:")
    w("  x1: q_spring2" if n > 1 else "  p1: p_mass1")
    w(f"  vN: f_v{n}")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", type=int, help="number of masses (>= 1)")
    ap.add_argument("--sine", action="store_true", help="a sinusoidal force instead of a constant one")
    ap.add_argument("-o", "--output", help="output file (default: standard output)")
    args = ap.parse_args()
    if args.n < 1:
        ap.error("n must be at least 1")
    text = model(args.n, args.sine)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        print(text, end="")


if __name__ == "__main__":
    main()
