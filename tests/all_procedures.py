#!/usr/bin/env python3
"""Every causality procedure on every example, with `causality` and `draw`.

A run passes when it gives its report (exit 0, or 1 for `causality` when
causal conflicts remain: the report says so) or a located error: exit 1 with
"error" and the model file's name on stderr. It fails on anything else: a
crash, another exit status, an error that names no file, or a message
starting "internal:" anywhere (an invariant broken inside paynter).

Usage: all_procedures.py PAYNTER SOURCE_DIR PROCEDURE
"""
import glob
import os
import subprocess
import sys
import tempfile


def main():
    paynter, source, procedure = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3]
    examples = sorted(glob.glob(os.path.join(source, "examples", "*.yaml")))
    failures = reports = errors = 0
    with tempfile.TemporaryDirectory(prefix="paynter-procedures-") as d:
        for path in examples:
            name = os.path.basename(path)
            for command in (["causality", path, "--procedure", procedure],
                            ["draw", path, "--procedure", procedure, "-o", os.path.join(d, "graph.svg")]):
                p = subprocess.run([paynter] + command, cwd=d, capture_output=True, text=True, timeout=300)
                output = p.stdout + p.stderr
                report = p.returncode == 0 or (p.returncode == 1 and command[0] == "causality" and
                                                "conflict" in p.stdout and not p.stderr.strip())
                located = p.returncode == 1 and "error" in p.stderr and name in p.stderr
                ok = (report or located) and "internal:" not in output
                reports += report
                errors += located and not report
                if not ok:
                    failures += 1
                    print(f"FAIL paynter {command[0]} examples/{name} --procedure {procedure}: exit {p.returncode}")
                    print("\n".join("    " + l for l in output.splitlines()[-20:]))
    print(f"{procedure}: {len(examples)} examples x causality, draw: {reports} reports, {errors} located errors, "
          f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
