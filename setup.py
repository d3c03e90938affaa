"""Builds the wheel of the Python module `paynter` from the CMake build
(pyproject.toml): the package python/paynter/ with its type stub, and the
compiled extension _paynter that the CMake build made in
<build>/python/paynter/. The build directory is $PAYNTER_BUILD_DIR, else
build/ beside this file; it is brought up to date (cmake --build --target
_paynter), and configured first when it does not exist yet. The extension must
be built for the Python that runs pip (the same ABI tag); the wheel records
that tag. Nothing is downloaded."""
import importlib.machinery
import os
import re
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.abspath(os.environ.get("PAYNTER_BUILD_DIR") or os.path.join(HERE, "build"))


def version():
    with open(os.path.join(HERE, "CMakeLists.txt")) as f:
        return re.search(r"project\(paynter VERSION ([0-9.]+)", f.read()).group(1)


def extension():
    """The path of the _paynter extension for this interpreter, built if needed."""
    cache = os.path.join(BUILD, "CMakeCache.txt")
    if not os.path.isfile(cache):
        subprocess.check_call(["cmake", "-S", HERE, "-B", BUILD, "-DCMAKE_BUILD_TYPE=Release",
                               "-DPAYNTER_BUILD_TESTS=OFF", "-DPAYNTER_BUILD_BENCH=OFF",
                               "-DPAYNTER_PYTHON_REGISTER=OFF", "-DPython_EXECUTABLE=" + sys.executable])
    subprocess.check_call(["cmake", "--build", BUILD, "--target", "_paynter", "-j%d" % (os.cpu_count() or 1)])
    directory = os.path.join(BUILD, "python", "paynter")
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(directory, "_paynter" + suffix)
        if os.path.isfile(path):
            return path
    found = [n for n in os.listdir(directory) if n.startswith("_paynter")] if os.path.isdir(directory) else []
    sys.exit("paynter: %s holds no _paynter extension for this Python (%s, suffixes %s); it has %s. Build it for this "
             "interpreter: configure a build directory with -DPython_EXECUTABLE=%s and set PAYNTER_BUILD_DIR to it"
             % (directory, sys.executable, ", ".join(importlib.machinery.EXTENSION_SUFFIXES), found or "none",
                sys.executable))


class BuildPy(build_py):
    """The package's Python files, then the compiled extension beside them."""

    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "paynter")
        os.makedirs(target, exist_ok=True)
        source = extension()
        shutil.copy2(source, os.path.join(target, os.path.basename(source)))


class BinaryDistribution(Distribution):
    """A wheel for one platform and Python ABI (it holds a compiled module)."""

    def has_ext_modules(self):
        return True


os.makedirs(os.path.join(BUILD, "python-wheel"), exist_ok=True)
setup(
    version=version(),
    packages=["paynter"],
    package_dir={"paynter": "python/paynter"},
    package_data={"paynter": ["*.pyi", "py.typed"]},
    cmdclass={"build_py": BuildPy},
    distclass=BinaryDistribution,
    # setuptools' own build files go into the CMake build directory, not into
    # the source tree.
    options={"build": {"build_base": os.path.join(BUILD, "python-wheel")},
             "egg_info": {"egg_base": os.path.join(BUILD, "python-wheel")}},
)
