#!/usr/bin/env python3
"""Writes a chain of N transformers as a scalar bond graph (the transformer
chain of docs/performance.md).

An effort source E drives the 1-junction j0; stage i is the transformer tf_i
(ratio r_i, bonded j(i-1) -> tf_i -> ji: e at j(i-1) = r_i * e at ji, flow
at ji = r_i * flow at j(i-1)) and the 1-junction ji with a stage element s_i:
a damper (R, resistance c; the default) or, with --stage I, an inertia (I,
inertance c). The last junction jN carries the load: an inertia (I, inertance
m) and a resistance (R, resistance RL). The junction flows are rigidly tied
through the transformers, so the chain has one state. With dampers, the
load's inertia is that state and every damper takes its flow from it; with
inertias, every stage inertia is in derivative causality, tied to the load's
through the product of the ratios (one implicit block of N + 1 derivatives).

The ratios alternate between the parameters ra = 1.01 and rb = 0.990099
(ra rb = 1 to 1e-8, so the products stay near 1 at any N); with --distinct,
stage i has its own parameter r<i>. The equations hold the product of the
first i ratios as ra^k rb^m, so the ratios are kept near 1: with ra = 1.25
and rb = 0.8, ra^4000 overflows, rb^4000 underflows, and N = 8000 stops with
a NaN residual. Three bonds per stage: N = 2000 gives 6,003 bonds.

Closed form (constant E, from rest): the flow at ji is P_i f0 with
P_i = r_1 ... r_i. With dampers, f_jN = P_N E / (c S + RL P_N^2) with
S = sum_i P_i^2, reached with the time constant m P_N^2 / (c S + RL P_N^2).
With inertias the steady state is f_jN = E / (RL P_N) -- the gain of the
chain is the product of the ratios -- reached with the time constant
(m + c S / P_N^2) / RL.

Usage: python3 bench/make_tf_chain.py N [--stage R|I] [--distinct] [--sine] [-o chain.yaml]
Python 3 standard library only.
"""
import argparse


def model(n, stage="R", distinct=False, sine=False):
    out = []
    w = out.append
    w(f"# A chain of {n} transformers: written by bench/make_tf_chain.py; regenerate rather than edit.")
    w(f"name: tf_chain_{n}")
    w("parameters:")
    w("  E: 1       # source effort [V]")
    w("  c: 0.01    # stage element: resistance [ohm] or inertance [H]")
    w("  m: 0.1     # load inertance [H]")
    w("  RL: 1      # load resistance [ohm]")
    if sine:
        w("  f: 2       # frequency of the source [Hz]")
    if distinct:
        for i in range(1, n + 1):
            w(f"  r{i}: {1.01 if i % 2 else 0.990099}")
    else:
        w("  ra: 1.01       # ratio of the odd stages")
        w("  rb: 0.990099   # ratio of the even stages")
    w("elements:")
    w("  - {name: source, kind: Se, effort: " + ("E*sin(2*pi*f*t)" if sine else "E") + "}")
    w("  - {name: j0, kind: \"1\"}")
    for i in range(1, n + 1):
        ratio = f"r{i}" if distinct else ("ra" if i % 2 else "rb")
        w(f"  - {{name: tf{i}, kind: TF, ratio: {ratio}}}")
        w(f"  - {{name: j{i}, kind: \"1\"}}")
        law = "resistance" if stage == "R" else "inertance"
        w(f"  - {{name: s{i}, kind: {stage}, {law}: c}}")
    w("  - {name: load, kind: I, inertance: m}")
    w("  - {name: load_R, kind: R, resistance: RL}")
    w("bonds:")
    w("  - [source, j0]")
    for i in range(1, n + 1):
        w(f"  - [j{i - 1}, tf{i}]")
        w(f"  - [tf{i}, j{i}]")
        w(f"  - [j{i}, s{i}]")
    w(f"  - [j{n}, load]")
    w(f"  - [j{n}, load_R]")
    w("outputs:")
    w("  f_in: f_j0")
    w(f"  f_out: f_j{n}")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", type=int, help="number of transformer stages (>= 1)")
    ap.add_argument("--stage", choices=["R", "I"], default="R", help="the element at each stage's junction")
    ap.add_argument("--distinct", action="store_true", help="one ratio parameter per stage")
    ap.add_argument("--sine", action="store_true", help="a sinusoidal source instead of a constant one")
    ap.add_argument("-o", "--output", help="output file (default: standard output)")
    args = ap.parse_args()
    if args.n < 1:
        ap.error("n must be at least 1")
    text = model(args.n, args.stage, args.distinct, args.sine)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        print(text, end="")


if __name__ == "__main__":
    main()
