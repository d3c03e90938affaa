#!/usr/bin/python3
"""Fuzzer of the Python API (not coverage-guided): mutated example models
(fuzz/mutate.py) given to paynter.from_dict / loads, and random sequences of
the Model calls (check, causality, equations, simulate, simulate_many) with
random options, good and bad.

    /usr/bin/python3 fuzz/fuzz_python.py [--runs N] [--seed S] [--out DIR]
    /usr/bin/python3 fuzz/fuzz_python.py --case SEED K      # one case again, verbosely

Each case runs in a worker process; the parent counts the executions (one
API call each) and records as findings, in DIR (default build-fuzz/python):
  - an exception other than paynter.ModelError, paynter.Error from
    causality() with causal conflicts (with its `report`), or the documented
    TypeError/ValueError (a dict of no model's shape, a value of the wrong type
    given on purpose);
  - a message of an internal error ("internal" in the text);
  - a crash of the worker (a signal, a sanitizer abort);
  - a call that runs over 10 s (the API prints no progress);
  - the canary file that the hostile texts try to create (text from a model
    ran as code).
Needs the module (build/python, scripts/build.sh; --module DIR for another);
uses a private stage cache.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mutate  # noqa: E402

LIMIT_SECONDS = 10
CASES_PER_WORKER = 200
METHODS = ["dopri5", "rk4", "bdf", "euler", ""]
FORMS = ["state", "lagrange1", "lagrange2", "hamilton", "bogus"]
CONSTRAINTS = ["auto", "lagrange-multipliers", "minimal-coordinates", "parasitic", "zcp", "bogus"]
PROCEDURES = ["SCAP", "HaCAP", "LaCAP", "LCAP", "RCAP", "bogus"]


class WrongType(Exception):
    pass


def options(rng):
    """simulate's keywords; the second value says whether a wrong type was given on purpose."""
    o = {"backend": rng.choice(["tape"] * 8 + ["auto", "gpu"]), "max_steps": rng.choice([100, 20000, 0, -1])}
    if rng.random() < 0.5:
        o["method"] = rng.choice(METHODS)
    if rng.random() < 0.3:
        o["form"] = rng.choice(FORMS)
    if rng.random() < 0.3:
        o["constraints"] = rng.choice(CONSTRAINTS)
    for k, vals in [("rtol", [1e-6, 0.0, -1.0, 1e300, float("nan")]), ("atol", [1e-9, 0.0, float("inf")]),
                    ("dt_out", [0.0, 1e-3, -1.0, 1e-12]), ("step", [1e-3, 0.0, -1e-3, 1e-9]),
                    ("t0", [0.0, 1.0, -1e300]), ("drift_tolerance", [1e-6, 0.0, -1.0, float("nan")]),
                    ("parasitic_stiffness", [0.0, 1e6, -1.0]), ("block_solve", ["auto", "dense", "sparse", "bogus"]),
                    ("params", [{"m": 2.0}, {"B": float("nan")}, {"": 1.0}, {"nope": 1.0}, {"g": 1e308}]),
                    ("energy", [True, False]), ("assemble", [True, False]), ("stabilize", [True, False])]:
        if rng.random() < 0.15:
            o[k] = rng.choice(vals)
    wrong = False
    if rng.random() < 0.03:
        o[rng.choice(["rtol", "max_steps", "params", "method"])] = rng.choice(["abc", [1], {"x": "y"}, None, object()])
        wrong = True
    return o, wrong


def case(seed, k, verbose=False):
    """Runs case (seed, k); yields (what, exception or None) per API call."""
    rng = random.Random(seed * 1000003 + k)
    import paynter
    name, d, text = mutate.mutated_model(rng)
    if verbose:
        print("seed model:", name)
        print(mutate.yaml.safe_dump(d) if d is not None else text)
    calls = []
    try:
        model = paynter.from_dict(d) if d is not None else paynter.loads(text)
    except (paynter.ModelError, TypeError, ValueError) as e:
        if d is None and not isinstance(e, paynter.ModelError):
            raise
        return [("load", e)]
    calls.append(("load", None))
    for _ in range(rng.randint(1, 3)):
        what = rng.choice(["check", "causality", "equations", "simulate", "simulate", "simulate", "simulate_many"])
        wrong = False
        if os.environ.get("PAYNTER_FUZZ_CALL"):  # which call a hang is in
            with open(os.environ["PAYNTER_FUZZ_CALL"], "w") as f:
                f.write("%s (seed model %s)" % (what, name))
        try:
            if what == "check":
                model.check()
            elif what == "causality":
                try:
                    model.causality(rng.choice(PROCEDURES), rng.choice(CONSTRAINTS))
                except paynter.ModelError:
                    raise
                except paynter.Error as e:
                    if not hasattr(e, "report"):
                        raise
            elif what == "equations":
                model.equations(rng.choice(FORMS), rng.random() < 0.3, rng.random() < 0.1, rng.choice(CONSTRAINTS))
            else:
                o, wrong = options(rng)
                t_end = rng.choice([0.01, 0.1, 1.0, 0.0, -1.0, 1e300])
                if what == "simulate":
                    r = model.simulate(t_end, **o)
                    _ = (r.t, r.data, r.columns, r.stats)
                else:
                    sets = [{} for _ in range(rng.randint(0, 3))]
                    model.simulate_many(sets, t_end, threads=rng.choice([1, 2, -1]),
                                        errors=rng.choice(["raise", "return"]), **o)
            calls.append((what, None))
        except paynter.ModelError as e:
            calls.append((what, e))
        except (TypeError, ValueError) as e:
            if not wrong and not (what == "simulate_many" and "threads" in str(e)):
                raise
            calls.append((what, e))
    return calls


def worker(seed, first, count, state, findings, canary):
    os.environ.setdefault("PYTHONHASHSEED", "0")
    executions = 0
    outcomes = {}  # "call ok" / "call ModelError" -> count
    for k in range(first, first + count):
        with open(state, "w") as f:
            f.write("%d %d %f" % (k, executions, time.time()))
        try:
            calls = case(seed, k)
            executions += len(calls)
            for what, e in calls:
                key = "%s %s" % (what, "ok" if e is None else type(e).__name__)
                outcomes[key] = outcomes.get(key, 0) + 1
            with open(state + ".outcomes", "w") as f:
                json.dump(outcomes, f)
            for what, e in calls:
                if e is not None and "internal" in str(e).lower():
                    raise RuntimeError("an internal error from %s: %s" % (what, e))
            if os.path.exists(canary):
                os.remove(canary)
                raise RuntimeError("the canary file was created: text from a model ran as code")
        except Exception as e:  # a finding
            executions += 1
            with open(os.path.join(findings, "case-%d-%d.json" % (seed, k)), "w") as f:
                json.dump({"seed": seed, "case": k, "error": repr(e), "traceback": traceback.format_exc()}, f,
                          indent=1)
    with open(state, "w") as f:
        f.write("%d %d %f done" % (first + count, executions, time.time()))


def parent(args):
    os.makedirs(args.out, exist_ok=True)
    findings = os.path.join(args.out, "findings")
    os.makedirs(findings, exist_ok=True)
    cache = tempfile.mkdtemp(prefix="paynter-fuzz-cache-")
    env = dict(os.environ, XDG_CACHE_HOME=cache, PYTHONPATH=args.module,
               PAYNTER_FUZZ_CALL=os.path.join(args.out, "call"))
    state = os.path.join(args.out, "state")
    executions, cases, crashes, hangs = 0, 0, 0, 0
    outcomes = {}
    start = time.time()
    k = 0
    while executions < args.runs and (args.seconds <= 0 or time.time() - start < args.seconds):
        if os.path.exists(state):
            os.remove(state)
        p = subprocess.Popen([sys.executable, __file__, "--worker", str(args.seed), str(k), str(CASES_PER_WORKER),
                              state, findings], env=env, cwd=args.out, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        last = (None, time.time())
        while p.poll() is None:
            time.sleep(0.2)
            try:
                cur = open(state).read().split()
            except (OSError, ValueError):
                continue
            if cur and cur[0] != last[0]:
                last = (cur[0], time.time())
            elif cur and time.time() - last[1] > LIMIT_SECONDS:
                p.kill()
                p.wait()
                hangs += 1
                with open(os.path.join(findings, "hang-%d-%s.json" % (args.seed, cur[0])), "w") as f:
                    call = open(env["PAYNTER_FUZZ_CALL"]).read() if os.path.exists(env["PAYNTER_FUZZ_CALL"]) else ""
                    json.dump({"seed": args.seed, "case": int(cur[0]), "error": "over %d s" % LIMIT_SECONDS,
                               "call": call}, f)
                break
        err = p.stderr.read().decode(errors="replace")
        if os.path.exists(state + ".outcomes"):
            for key, v in json.load(open(state + ".outcomes")).items():
                outcomes[key] = outcomes.get(key, 0) + v
            os.remove(state + ".outcomes")
        cur = open(state).read().split() if os.path.exists(state) else [str(k), "0"]
        executions += int(cur[1])
        done = int(cur[0])
        if p.returncode not in (0, -9):
            crashes += 1
            with open(os.path.join(findings, "crash-%d-%s.json" % (args.seed, cur[0])), "w") as f:
                json.dump({"seed": args.seed, "case": done, "returncode": p.returncode, "stderr": err[-4000:]}, f)
        cases += (done - k) + (0 if len(cur) > 3 else 1)
        k = done + (0 if len(cur) > 3 else 1)
    shutil.rmtree(cache, ignore_errors=True)
    n = len(os.listdir(findings))
    summary = {"target": "python", "executions": executions, "cases": cases, "seconds": round(time.time() - start),
               "findings": n, "crashes": crashes, "hangs": hangs, "seed": args.seed,
               "outcomes": dict(sorted(outcomes.items()))}
    print(json.dumps(summary))
    return 1 if n else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000, help="executions (API calls) to reach")
    ap.add_argument("--seconds", type=float, default=0, help="stop after this long (0: no limit)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(mutate.ROOT, "build-fuzz", "python"))
    ap.add_argument("--module", default=os.path.join(mutate.ROOT, "build", "python"),
                    help="the directory holding the paynter package (default: this build's)")
    ap.add_argument("--case", nargs=2, type=int)
    ap.add_argument("--worker", nargs=5)
    args = ap.parse_args()
    args.module = os.path.abspath(args.module)
    if args.case:
        sys.path.insert(0, args.module)
        for what, e in case(args.case[0], args.case[1], verbose=True):
            print(what, "->", repr(e))
        return 0
    if args.worker:
        seed, first, count, state, findings = args.worker
        worker(int(seed), int(first), int(count), state, findings, mutate.CANARY)
        return 0
    args.out = os.path.abspath(args.out)
    return parent(args)


if __name__ == "__main__":
    sys.exit(main())
