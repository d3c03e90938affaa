#!/usr/bin/env python3
"""Cold runs (empty cache) of the command line: tiered against waiting for the compiler.

For each model and repetition, interleaved: `paynter simulate` of one
executable given as --before (its default backend), then this build with
--backend native (waits for the compiler: its CPU includes the compile) and
with the default backend (tiered: on the tape until the native code is
built, the compile going on in a detached process whose CPU time the
process's does not include); each run with a fresh, empty $XDG_CACHE_HOME.
The script is a child subreaper (prctl), so the detached build process is
reparented to it and its CPU time, with its compilers', can be counted: the
CPU columns are user + system time of the run and its descendants; for
tiered runs, the process's own ("run") and with the build it left behind
("+ build", counted once the build has ended). After each run the script
waits for the build to end, and after a tiered run it checks that the next
run loads native code from the cache. Prints a Markdown table of medians and
the tiered runs' right-hand-side runs on the tape and in native code.

  python3 bench/cold_runs.py build [--before OLD/paynter] [--reps 3]
"""
import argparse
import ctypes
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

MODELS = [  # (label, model file, or a generator and its argument; simulate options)
    ("B1", "examples/B1_pendulum.yaml", "--t-end 10"),
    ("B3", "examples/B3_quick_return.yaml", "--t-end 10"),
    ("B4", "examples/B4_spatial_arm.yaml", "--t-end 5"),
    ("mass–spring, 10,000 bonds", ("bench/make_mass_spring.py", "2000"), "--t-end 1"),
    ("chain N = 16", ("examples/make_chain.py", "16"), "--t-end 1"),
]


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def reap_all():
    """Waits for every descendant reparented to this script (the detached builds)."""
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return


def run(exe, model, options, cache, out):
    cmd = [exe, "simulate", model, *options, "--stats", "-o", out]
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    before = children_cpu()
    start = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    own = children_cpu() - before
    reap_all()
    cpu = (own, children_cpu() - before)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    m = re.search(r"right-hand side run (\d+) times on the tape, (\d+) in native code", p.stderr)
    tiers = (int(m.group(1)), int(m.group(2))) if m else None
    b = re.search(r"\((\w+) backend\)", p.stderr)
    return wall, cpu, tiers, b.group(1) if b else "?"


def settled(cache):
    d = os.path.join(cache, "paynter")
    return not any(".tmp-" in f for f in os.listdir(d))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--before", help="an older paynter executable to compare with")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", help="run only the models whose label contains this")
    args = ap.parse_args()
    PR_SET_CHILD_SUBREAPER = 36
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("cannot become a child subreaper")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    exe = os.path.join(os.path.abspath(args.build), "paynter")
    variants = ([("before", args.before, [])] if args.before else []) + [
        ("native", exe, ["--backend", "native"]), ("tiered", exe, [])]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.csv")
        head = " | ".join(f"{v} wall / CPU (s)" for v, _, _ in variants[:-1])
        print(f"| model | {head} | tiered wall / CPU run / CPU + build (s) | tiered: rhs runs tape / native |")
        print("|---|" + "---:|" * (len(variants) + 1))
        for label, source, options in MODELS:
            if args.only and args.only not in label:
                continue
            if isinstance(source, tuple):
                model = os.path.join(tmp, "model.yaml")
                subprocess.run([sys.executable, os.path.join(root, source[0]), source[1], "-o", model], check=True,
                               capture_output=True)
            else:
                model = os.path.join(root, source)
            results = {v: [] for v, _, _ in variants}
            tiers = []
            for rep in range(args.reps):
                for v, program, extra in variants:
                    cache = os.path.join(tmp, f"cache-{label[:2]}-{v}-{rep}")
                    os.makedirs(cache)
                    wall, cpu, t, _ = run(program, model, options.split() + extra, cache, out)
                    results[v].append((wall, cpu))
                    if v == "tiered":
                        tiers.append(t)
                        if not settled(cache):
                            sys.exit(f"{label}: temporaries left in the cache after the build ended")
                        if run(program, model, options.split(), cache, out)[3] != "native":
                            sys.exit(f"{label}: the run after a tiered one did not load native code")
            cells = []
            for v, _, _ in variants:
                w = statistics.median(r[0] for r in results[v])
                own = statistics.median(r[1][0] for r in results[v])
                total = statistics.median(r[1][1] for r in results[v])
                cells.append(f"{w:.2f} / {own:.2f} / {total:.2f}" if v == "tiered" else f"{w:.2f} / {total:.2f}")
            tier_text = ", ".join(f"{t[0]} / {t[1]}" for t in tiers if t)
            print(f"| {label} | {' | '.join(cells)} | {tier_text} |", flush=True)


if __name__ == "__main__":
    main()
