#!/usr/bin/env python3
"""Warm runs with and without the stage cache, in one run of this script.

For each model: one run to fill both caches (native code and stages), then
--reps times a run with --no-cache (the symbolic stages built as before the
stage cache; native code from its cache when the C source is the same) and a
warm run. Prints, as Markdown, the median "model to ready" (file to compiled
model, from --stats), whole-process wall and CPU time of each, their ratios,
and how many of the --no-cache runs compiled their C code again (a C source
not seen before: GiNaC shaped the equations otherwise).

  python3 bench/stage_cache.py build [--reps 3]
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

MODELS = [  # (label, model file or None for the chain, simulate options)
    ("B1", "examples/B1_pendulum.yaml", "--t-end 10"),
    ("B2 hyperstatic", "examples/B2_slider_crank_hyperstatic.yaml", "--t-end 1"),
    ("B3", "examples/B3_quick_return.yaml", "--t-end 10"),
    ("B4", "examples/B4_spatial_arm.yaml", "--t-end 5"),
    ("chain N=16", None, "--t-end 1"),
]


def run(exe, model, options, env, out):
    cmd = [exe, "simulate", model, *options.split(), "--stats", "-o", out]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    whole = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    m = re.search(r"model to ready ([0-9.]+) s \(([^)]*)\)", p.stderr)
    return whole, cpu, float(m.group(1)), "stage cache" in m.group(2)


def objects(cache):
    d = os.path.join(cache, "paynter")
    return len([f for f in os.listdir(d) if f.endswith(".so")]) if os.path.isdir(d) else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    exe = os.path.join(os.path.abspath(args.build), "paynter")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"))
        chain = os.path.join(tmp, "chain16.yaml")
        subprocess.run([sys.executable, os.path.join(root, "examples/make_chain.py"), "16", "-o", chain], check=True,
                       capture_output=True)
        out = os.path.join(tmp, "out.csv")
        print("| model | ready, stages built (s) | ready, warm (s) | ratio | whole run, --no-cache (s) "
              "| whole run, warm (s) | ratio | CPU, --no-cache (s) | CPU, warm (s) | C compiled again |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for label, rel, options in MODELS:
            model = chain if rel is None else os.path.join(root, rel)
            run(exe, model, options, env, out)  # fills both caches
            cold, warm, recompiled = [], [], 0
            for _ in range(args.reps):
                n = objects(env["XDG_CACHE_HOME"])
                cold.append(run(exe, model, options + " --no-cache", env, out))
                recompiled += objects(env["XDG_CACHE_HOME"]) > n
                assert not cold[-1][3]
                warm.append(run(exe, model, options, env, out))
                assert warm[-1][3]
            med = lambda runs, k: statistics.median(r[k] for r in runs)
            cr, wr, cw, ww, cc, wc = med(cold, 2), med(warm, 2), med(cold, 0), med(warm, 0), med(cold, 1), med(warm, 1)
            print(f"| {label} | {cr:.4f} | {wr:.4f} | {cr / wr:.0f} | {cw:.3f} | {ww:.3f} | {cw / ww:.1f} "
                  f"| {cc:.3f} | {wc:.3f} | {recompiled} of {args.reps} |", flush=True)


if __name__ == "__main__":
    main()
