#!/usr/bin/env python3
"""Seeds for the libFuzzer targets from examples/ and docs/, written into
fuzz/corpus/<target>/ beside what is there (scripts/fuzz.sh merge TARGET then
keeps what adds coverage):
  fuzz_expression  every expression, condition and unit of the example models
  fuzz_cli         every `paynter simulate|sweep|causality|equations|expand`
                   command line shown in docs/ and README.md
  fuzz_sweep       every --param text of those command lines, and small tables
Run from the repository's top: python3 fuzz/seeds.py
"""
import glob
import hashlib
import os
import re
import shlex

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def put(target, data):
    d = os.path.join(ROOT, "fuzz", "corpus", target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def scalars(node):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from scalars(k)
            yield from scalars(v)
    elif isinstance(node, list):
        for v in node:
            yield from scalars(v)
    elif isinstance(node, (str, int, float)) and not isinstance(node, bool):
        yield str(node)


def expressions():
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*.yaml"))):
        try:
            doc = yaml.safe_load(open(path))
        except yaml.YAMLError:
            continue
        for s in scalars(doc):
            if len(s) > 2000:
                continue
            b = s.encode()
            put("fuzz_expression", b"\x00" + b)
            if "<" in s or ">" in s:
                put("fuzz_expression", b"\x01" + b)
            m = re.search(r"\[([^\]]+)\]", s)
            if m:
                put("fuzz_expression", b"\x02" + m.group(1).encode())
    for u in ["kg m^2", "N m s/rad", "kg/(m s^2)", "uF", "kOhm", "m/s^2", "rad/s", "1/s", "m^(1/2)"]:
        put("fuzz_expression", b"\x02" + u.encode())


def command_lines():
    texts = [open(p).read() for p in sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))]
    texts.append(open(os.path.join(ROOT, "README.md")).read())
    for text in texts:
        for line in text.splitlines():
            m = re.search(r"paynter (simulate|sweep|causality|equations|expand) [^`|]*", line)
            if not m:
                continue
            try:
                args = shlex.split(m.group(0))[1:]
            except ValueError:
                continue
            put("fuzz_cli", "\n".join(args).encode())
            params = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--param"]
            logs = ["log " + args[i + 1] for i, a in enumerate(args[:-1]) if a == "--log"]
            if params:
                put("fuzz_sweep", b"\x00" + "\n".join(params + logs).encode())


def tables():
    for t in ["B,k\n1,2\n3,4\n", "m\n1\n2.5\n1e-3\n", "a, b ,\"c\"\r\n1,2,3\r\n"]:
        put("fuzz_sweep", b"\x01" + t.encode())
    put("fuzz_sweep", b"\x00B=0:20:11\nk=1:100:3\nlog k\nm=2")


if __name__ == "__main__":
    expressions()
    command_lines()
    tables()
