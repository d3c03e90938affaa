"""Mutations of paynter's example models for the fuzzers that are not
coverage-guided (fuzz_python.py, fuzz_fmu.py): a model as a dict or as YAML
text, changed at random in the ways hostile input changes it. Every run of a
seed gives the same sequence (random.Random(seed))."""
import copy
import glob
import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A file the hostile texts below try to create: finding it is a finding (text
# from a model file ran as code).
CANARY = "/tmp/paynter-fuzz-canary"

HOSTILE = [
    "0", "-1", "1e308", "-1e308", "1e-320", "1/0", "0^-1", "log(0)", ".nan", ".inf", "-.inf", "nan", "inf", "",
    " ", "x" * 300, "9" * 400, "(" * 120 + "1" + ")" * 120, "-" * 200 + "1", "2^3^4^5^6", "10^10^10",
    "sin(", "a b c", "e_1 f_1", "t", "p_", "\u00e9t\u00e9", "\x01\x7f", "\t\n", "'", '"', "\\", "%s%n%x",
    "${HOME}", "$(touch " + CANARY + ")", "`touch " + CANARY + "`", '"; system("touch ' + CANARY + '"); "',
    "*/ system(\"touch " + CANARY + "\"); /*", "</name><x>&amp;]]>", "<![CDATA[", "&lt;&#0;", "#include </dev/zero>",
    "\" set output '" + CANARY + "'", "lib:../../../etc/passwd", "lib:/etc/passwd", "/dev/zero", "../" * 10,
    "if(t > 1, 1, 0)", "step_at(1, 2)", "ramp(0, 1, 2)", "pulse(1, 0, 1)", "square(0, 1, -1)", "table(t, [0,1],[1])",
    "9.81 [m/s^2]", "1 [furlong]", "piecewise()", "atan2(0,0)", "sqrt(-1)", "abs()", "step(t)",
]
KINDS = ["Se", "Sf", "I", "C", "R", "TF", "GY", "0", "1", "MTF", "MGY", "RS", "XX", "", "De", "Df"]
INTS = [0, -1, 1, 2, 64, 65, 2 ** 31, 2 ** 63, -2 ** 63, 10 ** 30]
FLOATS = [0.0, -0.0, 1e-300, 1e300, -1.5, 3.14159]


def examples(max_bytes=20000):
    """The example models (as text) small enough to mutate."""
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*.yaml"))):
        text = open(path).read()
        if len(text) <= max_bytes:
            out.append((os.path.basename(path), text))
    return out


def _paths(node, prefix=()):
    """Every place in a dict/list tree, as a tuple of keys."""
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, prefix + (i,))


def _get(node, path):
    for k in path:
        node = node[k]
    return node


def _value(rng):
    r = rng.random()
    if r < 0.6:
        return rng.choice(HOSTILE)
    if r < 0.7:
        return rng.choice(KINDS)
    if r < 0.8:
        return rng.choice(INTS)
    if r < 0.9:
        return rng.choice(FLOATS)
    return rng.choice([True, None, [], {}, [rng.choice(HOSTILE)], {"x": rng.choice(HOSTILE)}])


def mutate_dict(rng, model, n=None):
    """A copy of `model` with 1-4 changes: a value replaced, a key renamed or
    removed, a list item duplicated, removed or moved, a subtree copied elsewhere."""
    m = copy.deepcopy(model)
    for _ in range(n or rng.randint(1, 4)):
        paths = [p for p in _paths(m) if p]
        if not paths:
            break
        path = rng.choice(paths)
        parent = _get(m, path[:-1])
        key = path[-1]
        op = rng.random()
        if op < 0.45:
            parent[key] = _value(rng)
        elif op < 0.55 and isinstance(parent, dict):
            parent[rng.choice(HOSTILE[:20] + ["name", "kind", "dim", "use", "of", "law", "initial"])] = parent.pop(key)
        elif op < 0.7:
            if isinstance(parent, dict):
                parent.pop(key)
            else:
                parent.pop(key)
        elif op < 0.8 and isinstance(parent, list):
            parent.insert(rng.randrange(len(parent) + 1), copy.deepcopy(parent[key]))
        elif op < 0.9 and isinstance(parent, list) and len(parent) > 1:
            item = parent.pop(key)
            parent.insert(rng.randrange(len(parent) + 1), item)
        else:
            other = rng.choice(paths)
            try:
                parent[key] = copy.deepcopy(_get(m, other))
            except (KeyError, IndexError, TypeError):
                pass
    return m


def mutate_text(rng, text):
    """YAML text with bytes changed, lines removed or doubled, or a hostile text spliced in."""
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):
        op = rng.random()
        i = rng.randrange(len(lines))
        if op < 0.3:
            lines.pop(i)
            if not lines:
                lines = [""]
        elif op < 0.5:
            lines.insert(i, lines[i])
        elif op < 0.8:
            line = lines[i]
            j = rng.randrange(len(line) + 1)
            lines[i] = line[:j] + rng.choice(HOSTILE + ["&a ", "*a", "<<: ", "!!binary", "{", "[", ":", "- ", "#"]) + line[j:]
        else:
            line = lines[i]
            if line:
                j = rng.randrange(len(line))
                lines[i] = line[:j] + chr(rng.randrange(1, 256)) + line[j + 1:]
    return "\n".join(lines)


def mutated_model(rng):
    """(seed name, dict or None, YAML text): a mutated example."""
    name, text = rng.choice(examples())
    if rng.random() < 0.6:
        try:
            d = yaml.safe_load(text)
        except yaml.YAMLError:
            d = None
        if isinstance(d, dict):
            return name, mutate_dict(rng, d), None
    return name, None, mutate_text(rng, text)
