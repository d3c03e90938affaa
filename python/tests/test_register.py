"""register.py, the build's registration of its module with Python (a
paynter.pth in the user site-packages): written where there is none, left as
it is where it points at another build's module (unless --replace), replaced
where it points at nothing usable. Each case in a user base of its own."""
import ast
import os
import re
import subprocess
import sys

import pytest

REGISTER = os.path.join(os.path.dirname(__file__), "..", "register.py")


def make_build(path):
    """A directory holding a paynter package, as <build>/python does."""
    (path / "paynter").mkdir(parents=True)
    (path / "paynter" / "__init__.py").write_text("")
    return path


def user_site(user_base):
    """This Python's user site-packages under `user_base`, or None when it
    has none (register.py would then write a site-packages of the system)."""
    env = dict(os.environ, PYTHONUSERBASE=str(user_base))
    env.pop("PYTHONNOUSERSITE", None)
    p = subprocess.run([sys.executable, "-c", "import site; print(site.ENABLE_USER_SITE, site.getusersitepackages())"],
                       capture_output=True, text=True, env=env)
    enabled, path = p.stdout.split()
    return path if enabled == "True" else None


def target_of(line):
    """The directory a paynter.pth line adds to sys.path."""
    m = re.search(r"sys\.path\.append\(('[^']*')\)", line)
    return ast.literal_eval(m.group(1)) if m else line.strip()


def register(user_base, target, *flags):
    env = dict(os.environ, PYTHONUSERBASE=str(user_base))
    env.pop("PYTHONNOUSERSITE", None)
    p = subprocess.run([sys.executable, REGISTER, str(target), *flags], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    pth = os.path.join(user_site(user_base), "paynter.pth")
    return p.stdout, (target_of(open(pth).read()) if os.path.exists(pth) else None)


def path_has(user_base, target):
    """Whether this Python, with `user_base`, has `target` on sys.path."""
    env = dict(os.environ, PYTHONUSERBASE=str(user_base))
    env.pop("PYTHONNOUSERSITE", None)
    env.pop("PYTHONPATH", None)
    p = subprocess.run([sys.executable, "-c", "import sys; print(%r in sys.path)" % str(target)],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip() == "True"


def test_registration_holds_for_its_interpreter_only(tmp_path):
    a = make_build(tmp_path / "a")
    user = tmp_path / "user"
    if user_site(user) is None:
        pytest.skip("this Python has no user site-packages: register.py would write the system's")
    register(user, a)
    assert path_has(user, a)
    # The same line in the user site-packages of another interpreter of this
    # version (its executable elsewhere) adds nothing.
    pth = os.path.join(user_site(user), "paynter.pth")
    line = open(pth).read()
    assert repr(os.path.realpath(sys.executable)) in line
    with open(pth, "w") as f:
        f.write(line.replace(repr(os.path.realpath(sys.executable)), repr("/opt/other/bin/python3")))
    assert not path_has(user, a)
    # A plain line from an older build pointing at the same directory is
    # rewritten in the new form, not reported as another build's.
    with open(pth, "w") as f:
        f.write(str(a) + "\n")
    out, target = register(user, a)
    assert target == str(a) and "left as it is" not in out
    assert "sys.path.append" in open(pth).read()


def test_register_keeps_another_builds_module(tmp_path):
    a, b = make_build(tmp_path / "a"), make_build(tmp_path / "b")
    user = tmp_path / "user"
    if user_site(user) is None:
        pytest.skip("this Python has no user site-packages: register.py would write the system's")
    out, pth = register(user, a)
    assert pth == str(a) and "paynter.pth -> " in out
    # Another build does not take the file over silently.
    out, pth = register(user, b)
    assert pth == str(a)
    assert "left as it is" in out and str(b) in out and "PAYNTER_PYTHON_REGISTER_REPLACE" in out
    # Asked to, it does.
    out, pth = register(user, b, "--replace")
    assert pth == str(b)
    # A file pointing at a build that is gone is replaced.
    gone = tmp_path / "gone"
    out, pth = register(user, gone, "--replace")
    assert pth == str(gone)
    out, pth = register(user, a)
    assert pth == str(a)
