"""register.py, the build's registration of its module with Python (a
paynter.pth in the user site-packages): written where there is none, left as
it is where it points at another build's module (unless --replace), replaced
where it points at nothing usable. Each case in a user base of its own."""
import os
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


def register(user_base, target, *flags):
    env = dict(os.environ, PYTHONUSERBASE=str(user_base))
    env.pop("PYTHONNOUSERSITE", None)
    p = subprocess.run([sys.executable, REGISTER, str(target), *flags], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    pth = os.path.join(user_site(user_base), "paynter.pth")
    return p.stdout, (open(pth).read().strip() if os.path.exists(pth) else None)


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
