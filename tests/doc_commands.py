#!/usr/bin/env python3
"""Runs the commands of README.md and docs/*.md as a user would type them.

Which commands are run (the convention the docs follow):
- In README.md, every line of a code block that starts with `build/paynter`
  or `/usr/bin/python3 -c`; in docs/*.md the same, in ```sh blocks only, and
  also lines starting with `paynter ` (the installed program: build/ is put on
  PATH). A block without a language, or ```text, holds a synopsis (FILE,
  METHOD, ...) and is not run; nor are lines of other programs (`bash
  scripts/...`, `cmake`, `mpirun`: they set up the machine or need several).
- ```python blocks in docs/*.md are run with /usr/bin/python3.
- A block whose info string names a file, as in ```csv file=planets.csv,
  is written to that file before the commands after it run.
- A line ending in `\\` continues on the next line; `# ...` outside quotes is
  a comment.
- In a command, `a|b|c` (one word) and ` | ` inside `[...]` are alternatives
  and `[...]` an optional group: the command is run once with every group
  left out and the first alternative of each choice, then once more for each
  other alternative and each group (with its own first choices), so that every
  alternative and every group is run once.

Each file's commands run in the order of the file, in one scratch directory
holding `build/paynter` (a link to the program under test) and links to the
repository's examples/ and library/. A command fails the test when it exits
non-zero or prints "internal" (an invariant broken inside paynter).

Usage: doc_commands.py PAYNTER SOURCE_DIR DOC [--list] [--no-python]
(--no-python: a build without the Python module; its commands are listed as skipped)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

LANG_RUN = {"sh", "python"}


def code_blocks(text, readme):
    """(info, lines) for every fenced block of a Markdown text."""
    blocks, info, lines = [], None, []
    for line in text.splitlines():
        if line.startswith("```"):
            if info is None:
                info, lines = line[3:].strip(), []
            else:
                blocks.append((info, lines))
                info = None
            continue
        if info is not None:
            lines.append(line)
    return blocks


def strip_comment(line):
    """The line without a trailing `# ...` that is outside quotes."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
    return line.rstrip()


def joined_lines(lines):
    """Lines with `\\` continuations joined, comments removed."""
    out, cur = [], ""
    for line in lines:
        s = strip_comment(line)
        if s.endswith("\\"):
            cur += s[:-1].rstrip() + " "
            continue
        cur += s.strip() if cur else s
        if cur.strip():
            out.append(cur.strip())
        cur = ""
    if cur.strip():
        out.append(cur.strip())
    return out


# A command as a tree: a list of items, each a string, ("alt", [str...]) for
# a word's alternatives or ("group", [seq...]) for an optional group with its
# alternatives.
def parse(text):
    pos = 0

    def seq(stop):
        nonlocal pos
        alts, items, word = [], [], ""
        quote = None
        while pos < len(text):
            c = text[pos]
            if quote:
                word += c
                if c == quote:
                    quote = None
                pos += 1
                continue
            if c in "'\"":
                quote = c
                word += c
                pos += 1
                continue
            if c == "[" and (pos == 0 or text[pos - 1] == " "):
                flush(items, word)
                word = ""
                pos += 1
                inner = seq("]")
                items.append(("group", inner))
                continue
            if stop and c == "]":
                pos += 1
                break
            if stop and c == "|" and text[pos - 1] == " ":
                flush(items, word)
                word = ""
                alts.append(items)
                items = []
                pos += 1
                continue
            if c == " ":
                flush(items, word)
                word = ""
                items.append(" ")
                pos += 1
                continue
            word += c
            pos += 1
        flush(items, word)
        if stop:
            alts.append(items)
            return alts
        return items

    def flush(items, word):
        if not word:
            return
        if "|" in word and word[0] not in "'\"":
            items.append(("alt", word.split("|")))
        else:
            items.append(word)

    return seq(None)


def variants(items):
    """The strings of a sequence: every default first, then each other choice once."""
    per_item = []
    for it in items:
        if isinstance(it, str):
            per_item.append([it])
        elif it[0] == "alt":
            per_item.append(it[1])
        else:
            opts = [""]
            for alternative in it[1]:
                opts.extend(variants(alternative))
            per_item.append(opts)
    base = [opts[0] for opts in per_item]
    out = ["".join(base)]
    for i, opts in enumerate(per_item):
        for o in opts[1:]:
            out.append("".join(base[:i] + [o] + base[i + 1:]))
    return [re.sub(r" +", " ", s).strip() for s in out]


def commands(doc_path):
    """(kind, text, line) to run, in the order of the document."""
    readme = os.path.basename(doc_path) == "README.md"
    text = open(doc_path, encoding="utf-8").read()
    out = []
    for info, lines in code_blocks(text, readme):
        words = info.split()
        lang = words[0] if words else ""
        file_arg = [w[5:] for w in words[1:] if w.startswith("file=")]
        if file_arg:
            out.append(("file", (file_arg[0], "\n".join(lines) + "\n"), info))
            continue
        if lang == "python" and not readme:
            out.append(("python", "\n".join(lines) + "\n", info))
            continue
        if not (readme or lang == "sh"):
            continue
        for cmd in joined_lines(lines):
            runnable = cmd.startswith("build/paynter ") or cmd.startswith("/usr/bin/python3 -c")
            runnable = runnable or (not readme and cmd.startswith("paynter "))
            if not runnable:
                continue
            for v in variants(parse(cmd)):
                out.append(("sh", v, cmd))
    return out


def scratch(paynter, source):
    d = tempfile.mkdtemp(prefix="paynter-doc-")
    os.makedirs(os.path.join(d, "build"))
    os.symlink(os.path.abspath(paynter), os.path.join(d, "build", "paynter"))
    for sub in ("examples", "library"):
        os.symlink(os.path.join(source, sub), os.path.join(d, sub))
    return d


def main():
    paynter, source, doc = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    todo = commands(os.path.join(source, doc))
    if "--list" in sys.argv:
        for kind, what, _ in todo:
            print(kind, what if kind != "file" else what[0])
        return 0
    d = scratch(paynter, source)
    env = dict(os.environ)
    env["PATH"] = os.path.join(d, "build") + os.pathsep + env.get("PATH", "")
    failures = skipped = 0
    for kind, what, origin in todo:
        if "--no-python" in sys.argv and (kind == "python" or (kind == "sh" and what.startswith("/usr/bin/python3"))):
            print(f"skip (no Python module in this build): {what.splitlines()[0]}")
            skipped += 1
            continue
        if kind == "file":
            with open(os.path.join(d, what[0]), "w", encoding="utf-8") as f:
                f.write(what[1])
            continue
        argv = ["/usr/bin/python3", "-c", what] if kind == "python" else ["bash", "-c", what]
        start = time.time()
        p = subprocess.run(argv, cwd=d, env=env, capture_output=True, text=True, timeout=600)
        shown = what if kind == "sh" else "python block (" + origin + "):\n" + what
        output = p.stdout + p.stderr
        bad = p.returncode != 0 or "internal:" in output
        print(f"{'FAIL' if bad else 'ok  '} {time.time() - start:6.2f}s  {shown}")
        if bad:
            failures += 1
            print(f"  exit {p.returncode}; output:\n" + "\n".join("    " + l for l in output.splitlines()[-30:]))
    print(f"{doc}: {len([t for t in todo if t[0] != 'file'])} commands, {skipped} skipped, {failures} failed"
          + (f" (scratch directory kept: {d})" if failures else ""))
    if not failures:
        shutil.rmtree(d)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
