#!/usr/bin/env python3
"""Fuzzer of the FMU export (not coverage-guided): mutated example models
(fuzz/mutate.py) through `paynter fmu FILE -o OUT.fmu` with random options.

    /usr/bin/python3 fuzz/fuzz_fmu.py [--runs N] [--seed S] [--paynter build/paynter] [--out DIR]
    /usr/bin/python3 fuzz/fuzz_fmu.py --case SEED K     # print case K's model and command

One execution is one export. Findings, written to DIR/findings (default
build-fuzz/fmu): an exit status other than 0 or 1; "internal error" in the
output; a signal; a failed export that leaves the .fmu or a temporary behind;
a written FMU that is not a zip holding a modelDescription.xml that parses as
XML and a shared object; the canary file the hostile texts try to create
(text from a model ran as code: the C compiler, the XML); an export that runs
over 10 s without printing anything. The time of every export is recorded; an
export that compiles C code takes seconds, and its figures say how long.
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
import xml.etree.ElementTree as ET
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mutate  # noqa: E402

LIMIT_SECONDS = 10


def command(rng, paynter, model_path, out):
    cmd = [paynter, "fmu", model_path, "-o", out]
    if rng.random() < 0.3:
        cmd += ["--kind", rng.choice(["me", "cs", "both", "xx"])]
    if rng.random() < 0.2:
        cmd += ["--form", rng.choice(["state", "lagrange1", "lagrange2", "hamilton", "x"])]
    if rng.random() < 0.2:
        cmd += ["--constraints", rng.choice(["auto", "parasitic", "zcp"])]
    if rng.random() < 0.2:
        cmd += ["--param", rng.choice(["m=2", "B=nan", "=1", "x", "g=1e308", "k=-1"])]
    if rng.random() < 0.1:
        cmd += ["--method", rng.choice(["rk4", "dopri5", "bdf"])]
    if rng.random() < 0.3:
        cmd += ["--fmi-version", rng.choice(["2", "3", "4"])]
    return cmd


def make_case(rng):
    name, d, text = mutate.mutated_model(rng)
    if d is not None:
        text = mutate.yaml.safe_dump(d, allow_unicode=True)
    return name, text


def check_fmu(path):
    """Why the written FMU is bad, or None."""
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            if "modelDescription.xml" not in names:
                return "no modelDescription.xml"
            ET.fromstring(z.read("modelDescription.xml"))
            # binaries/linux64 (FMI 2.0) or binaries/<platform tuple> (FMI 3.0)
            if not any(n.startswith("binaries/") and n.count("/") == 2 and n.endswith(".so") for n in names):
                return "no shared object"
    except (zipfile.BadZipFile, ET.ParseError, OSError) as e:
        return "unreadable FMU: %r" % e
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--paynter", default=os.path.join(mutate.ROOT, "build", "paynter"))
    ap.add_argument("--out", default=os.path.join(mutate.ROOT, "build-fuzz", "fmu"))
    ap.add_argument("--case", nargs=2, type=int)
    args = ap.parse_args()
    paynter = os.path.abspath(args.paynter)
    if args.case:
        rng = random.Random(args.case[0] * 1000003 + args.case[1])
        name, text = make_case(rng)
        print("# from", name, "\n" + text)
        print(" ".join(command(rng, paynter, "model.yaml", "out.fmu")))
        return 0
    out = os.path.abspath(args.out)
    findings = os.path.join(out, "findings")
    os.makedirs(findings, exist_ok=True)
    cache = tempfile.mkdtemp(prefix="paynter-fuzz-cache-")
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    work = tempfile.mkdtemp(prefix="paynter-fuzz-fmu-")
    start = time.time()
    n, written, slowest, found = 0, 0, 0.0, 0
    statuses = {}
    for k in range(args.runs):
        if args.seconds and time.time() - start > args.seconds:
            break
        rng = random.Random(args.seed * 1000003 + k)
        name, text = make_case(rng)
        for f in os.listdir(work):
            os.remove(os.path.join(work, f))
        model = os.path.join(work, "model.yaml")
        with open(model, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)
        fmu = os.path.join(work, "out.fmu")
        cmd = command(rng, paynter, model, fmu)
        t = time.time()
        try:
            p = subprocess.run(cmd, cwd=work, env=env, capture_output=True, timeout=120)
            rc, output = p.returncode, (p.stdout + p.stderr).decode(errors="replace")
        except subprocess.TimeoutExpired as e:
            rc, output = "timeout", ((e.stdout or b"") + (e.stderr or b"")).decode(errors="replace")
        seconds = time.time() - t
        n += 1
        statuses[str(rc)] = statuses.get(str(rc), 0) + 1
        why = None
        if rc not in (0, 1):
            why = "exit status %s" % rc
        elif "internal error" in output:
            why = "an internal error"
        elif os.path.exists(mutate.CANARY):
            os.remove(mutate.CANARY)
            why = "the canary file was created"
        elif rc == 1 and sorted(os.listdir(work)) != ["model.yaml"]:
            why = "a failed export left %s" % sorted(os.listdir(work))
        elif rc == 0:
            written += 1
            why = check_fmu(fmu)
        if seconds > LIMIT_SECONDS and not output.strip():
            why = why or "%.1f s without output" % seconds
        slowest = max(slowest, seconds)
        if why:
            found += 1
            with open(os.path.join(findings, "case-%d-%d.json" % (args.seed, k)), "w") as f:
                json.dump({"seed": args.seed, "case": k, "why": why, "seconds": seconds, "command": cmd,
                           "output": output[-4000:], "model": text, "from": name}, f, indent=1)
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    print(json.dumps({"target": "fmu", "executions": n, "fmus_written": written, "exit_statuses": statuses,
                      "slowest_seconds": round(slowest, 1), "seconds": round(time.time() - start),
                      "findings": found, "seed": args.seed}))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
