"""Runs every example in paynter's docstrings (help(paynter.X) shows them) as
a doctest, in a scratch directory whose examples/ is the repository's, and
checks that every public function, class and method has one. Run by CTest
(python_docstrings) with the build's module on PYTHONPATH."""
import doctest
import inspect
import os
import shutil
import sys
import tempfile

import paynter

SOURCE = os.environ.get("PAYNTER_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def public_members():
    """(name, object) of every public function, class, method and property."""
    for name in paynter.__all__:
        obj = getattr(paynter, name)
        if name in ("Error", "ModelError", "RUN_OPTIONS", "__version__"):
            continue
        yield name, obj
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                if isinstance(member, property):
                    member = member.fget
                if callable(member):
                    yield "%s.%s" % (name, attr), member


def main():
    missing = [name for name, obj in public_members() if "Example:" not in (inspect.getdoc(obj) or "")]
    if missing:
        print("no example in the docstring of: %s" % ", ".join(missing))
        return 1
    work = tempfile.mkdtemp(prefix="paynter-doctest-")
    try:
        os.symlink(os.path.join(os.path.abspath(SOURCE), "examples"), os.path.join(work, "examples"))
        os.chdir(work)
        import matplotlib

        matplotlib.use("Agg")
        result = doctest.testmod(paynter, extraglobs={"paynter": paynter},
                                 optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        print("%d examples, %d failed" % (result.attempted, result.failed))
        # Examples that write files wrote them here.
        for written in ("rlc_report.html", "rlc.fmu", "v_cap.png"):
            if not os.path.isfile(written):
                print("an example did not write %s" % written)
                return 1
        return 1 if result.failed or result.attempted < 30 else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
