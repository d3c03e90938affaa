#!/usr/bin/env python3
"""Large scalar bond graphs: `paynter check` and cold runs of the mass-spring chain.

For each N (masses, 5 N bonds) the script writes the chain with a sinusoidal
force (bench/make_mass_spring.py N --sine) -- with --model tf-chain, the chain
of N transformers with an inertia at each stage (bench/make_tf_chain.py N
--stage I --sine, 3 N + 3 bonds) -- then --reps times, for each
executable in turn (interleaved): `paynter check` and a cold `paynter simulate
--t-end 1` (a fresh, empty $XDG_CACHE_HOME: no stage cache, no native code;
the default tiered backend). Per run: wall time, CPU time (user + system of
the process) and peak resident memory (the process's ru_maxrss). The script is
a child subreaper and, after each run, waits for what the run left behind (its
native compile, which goes on after a tiered run ends), so that the next run
does not share the machine with it; that compile's CPU is not in the figures.
It checks that every executable writes the same CSV, byte for byte, and
prints the medians as Markdown, with the exponent of the CPU time between
consecutive sizes, log(t2 / t1) / log(N2 / N1).

  python3 bench/large_scalar.py build/paynter [--before OLD/paynter] [--n 2000 20000] [--reps 3]
                                [--model mass-spring|tf-chain]
"""
import argparse
import ctypes
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time


def reap_all():
    """Waits for every descendant reparented to this script (a detached compile)."""
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return


def run(cmd, env):
    start = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    reap_all()
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{err}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("paynter", help="the paynter executable to measure")
    ap.add_argument("--before", help="an older paynter executable to compare with")
    ap.add_argument("--n", type=int, nargs="+", default=[2000, 20000],
                    help="numbers of masses (5 bonds each) or of transformers (3 bonds each)")
    ap.add_argument("--model", choices=["mass-spring", "tf-chain"], default="mass-spring")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    bonds = (lambda n: 5 * n) if args.model == "mass-spring" else (lambda n: 3 * n + 3)
    what = "masses" if args.model == "mass-spring" else "transformers"
    PR_SET_CHILD_SUBREAPER = 36
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("cannot become a child subreaper")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    exes = ([("before", os.path.abspath(args.before))] if args.before else []) + [
        ("after" if args.before else "paynter", os.path.abspath(args.paynter))]
    results = {}  # (label, command, n) -> [(wall, cpu, mb)]
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.n:
            model = os.path.join(tmp, f"chain{n}.yaml")
            generator = (["bench/make_mass_spring.py", str(n)] if args.model == "mass-spring" else
                         ["bench/make_tf_chain.py", str(n), "--stage", "I"])
            subprocess.run([sys.executable, os.path.join(root, generator[0])] + generator[1:] + ["--sine", "-o", model],
                           check=True)
            for rep in range(args.reps):
                csvs = {}
                for label, exe in exes:
                    cache = os.path.join(tmp, f"cache-{label}-{n}-{rep}")
                    os.makedirs(cache)
                    env = dict(os.environ, XDG_CACHE_HOME=cache)
                    results.setdefault((label, "check", n), []).append(run([exe, "check", model], env))
                    out = os.path.join(tmp, f"{label}.csv")
                    results.setdefault((label, "simulate", n), []).append(
                        run([exe, "simulate", model, "--t-end", "1", "-o", out], env))
                    with open(out, "rb") as f:
                        csvs[label] = f.read()
                if len(set(csvs.values())) != 1:
                    sys.exit(f"N = {n}: the executables wrote different CSVs")
            print(f"N = {n} ({bonds(n)} bonds): {args.reps} repetitions, the same CSV from every executable", flush=True)
    print()
    print(f"| command | {what} (bonds) | " + " | ".join(f"{label} wall / CPU (s) / peak (MB)" for label, _ in exes) +
          (" | CPU after / before |" if args.before else " |"))
    print("|---|---|" + "---:|" * (len(exes) + (1 if args.before else 0)))
    med = lambda runs, k: statistics.median(r[k] for r in runs)
    for command in ("check", "simulate"):
        for n in args.n:
            cells = [f"{med(results[(l, command, n)], 0):.2f} / {med(results[(l, command, n)], 1):.2f} / "
                     f"{med(results[(l, command, n)], 2):.0f}" for l, _ in exes]
            ratio = ""
            if args.before:
                ratio = f" | {med(results[('after', command, n)], 1) / med(results[('before', command, n)], 1):.2f}"
            print(f"| {command} | {n} ({bonds(n)}) | " + " | ".join(cells) + ratio + " |")
    if len(args.n) > 1:
        print()
        for label, _ in exes:
            for command in ("check", "simulate"):
                parts = []
                for a, b in zip(args.n, args.n[1:]):
                    ta, tb = med(results[(label, command, a)], 1), med(results[(label, command, b)], 1)
                    parts.append(f"{a} -> {b}: {math.log(tb / ta) / math.log(b / a):.2f}")
                print(f"{label} {command}: exponent of CPU time {', '.join(parts)}")


if __name__ == "__main__":
    main()
