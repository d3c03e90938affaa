"""Makes `import paynter` find a build's module in the Python it was built
for: writes paynter.pth into this Python's user site-packages (or, where user
site-packages are off, into the first of its site-packages directories it may
write). Its one line adds the directory holding the package paynter/ to
sys.path only in this interpreter (the same executable, links resolved):
another Python of the same version reads the same user site-packages, and
must not import a module built for this one.

A paynter.pth that already points at another directory holding a paynter
package (another build, or one the user chose) is left as it is, with a
message saying so, unless --replace is given (CMake:
-DPAYNTER_PYTHON_REGISTER_REPLACE=ON); one that points at nothing usable is
replaced. Rewrites the file only when it changes. Undo: delete the
paynter.pth it names.

Usage: register.py DIRECTORY [--replace]"""
import ast
import os
import re
import site
import sys
import tempfile

target = os.path.abspath(sys.argv[1])
replace = "--replace" in sys.argv[2:]
candidates = ([site.getusersitepackages()] if site.ENABLE_USER_SITE else []) + list(site.getsitepackages())
executable = os.path.realpath(sys.executable)
# A .pth line that starts with "import" is run by site.py at start-up.
line = "import os, sys; os.path.realpath(sys.executable) == %r and sys.path.append(%r)\n" % (executable, target)


def pointed_at(text):
    """The directory a paynter.pth adds: the path of a line this script
    wrote, or a plain line's directory (an older build, or the user's)."""
    m = re.search(r"sys\.path\.append\(('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\)", text)
    if m:
        try:
            return ast.literal_eval(m.group(1))
        except (ValueError, SyntaxError):
            return ""
    return text.strip()


def holds_package(directory):
    return os.path.isfile(os.path.join(directory, "paynter", "__init__.py"))


for directory in candidates:
    path = os.path.join(directory, "paynter.pth")
    try:
        os.makedirs(directory, exist_ok=True)
        try:
            with open(path) as f:
                current = f.read()
        except OSError:
            current = None
        if current == line:
            sys.exit(0)
        other = pointed_at(current or "")
        if current is not None and not replace and other != target and holds_package(other):
            print("paynter: %s points at %s, which holds another paynter module; left as it is, so "
                  "`import paynter` imports that one, not this build's (%s). To use this build: delete the "
                  "file (the next build writes it), configure with -DPAYNTER_PYTHON_REGISTER_REPLACE=ON, "
                  "or set PYTHONPATH=%s" % (path, other, target, target))
            sys.exit(0)
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(line)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
        print("paynter: %s -> %s (import paynter from any directory; delete the file to undo)" % (path, target))
        sys.exit(0)
    except OSError:
        continue
print("paynter: could not write paynter.pth into any of %s; use PYTHONPATH=%s" % (candidates, target),
      file=sys.stderr)
