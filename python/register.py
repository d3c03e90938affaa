"""Makes `import paynter` find a build's module: writes paynter.pth (one line,
the directory holding the package paynter/) into this Python's user
site-packages, or, where user site-packages are off, into the first of its
site-packages directories it may write. Rewrites the file only when it
changes. Undo: delete the paynter.pth it names."""
import os
import site
import sys
import tempfile

target = os.path.abspath(sys.argv[1])
candidates = ([site.getusersitepackages()] if site.ENABLE_USER_SITE else []) + list(site.getsitepackages())
line = target + "\n"
for directory in candidates:
    path = os.path.join(directory, "paynter.pth")
    try:
        os.makedirs(directory, exist_ok=True)
        try:
            with open(path) as f:
                if f.read() == line:
                    sys.exit(0)
        except OSError:
            pass
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
