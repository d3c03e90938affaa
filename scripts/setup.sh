#!/usr/bin/env bash
# Installs the Debian packages paynter builds and runs with, if any are missing.
# Idempotent: does nothing when everything is present. Needs root (or sudo) only to install.
#   setup.sh --program   what the program needs to build, simulate and plot (scripts/run.sh)
#   setup.sh [PKG ...]   that, and what the tests, the Python module, sweeps, reports and
#                        LaTeX need (scripts/test.sh); extra packages may be named
#                        (scripts/fuzz.sh asks for clang)
set -euo pipefail

program_only=0
if [ "${1:-}" = "--program" ]; then program_only=1; shift; fi

# The program: compiler, CMake, the libraries it links, gnuplot for `paynter plot`.
PACKAGES=(
  build-essential cmake pkg-config
  libeigen3-dev libsundials-dev libginac-dev libcln-dev libsuitesparse-dev
  libyaml-cpp-dev libyaml-dev libcli11-dev libfmt-dev
  gnuplot-nox
)
if [ $program_only -eq 0 ]; then
  PACKAGES+=(
    libgtest-dev libgmock-dev libbenchmark-dev
    graphviz  # `paynter draw` renders with dot
    libcpp-httplib-dev libgraphviz-dev  # `paynter studio`: its server and its drawings in the process (src/studio/)
    # the Python module (docs/python.md): pybind11 and Debian's Python with numpy;
    # pytest runs its tests, pandas and matplotlib serve Result.to_pandas and plot
    pybind11-dev python3-dev python3-numpy python3-pytest python3-pandas python3-matplotlib
    # the module's tests: its type stub (mypy), pip install into a virtual
    # environment (venv), the tutorial notebook (nbconvert, the python3
    # kernel), Sweep.to_xarray (xarray)
    python3-mypy python3-venv jupyter-nbconvert python3-ipykernel python3-xarray
    unzip  # the FMU test unpacks exported FMUs (tests/fmi_importer.h)
    libxml2-utils  # xmllint: modelDescription.xml against the FMI 2.0 schemas (tests/fmi2/)
    # sweeps: HDF5 output, MPI ranks (mpirun), and h5py to read the files in the tests
    libhdf5-dev libopenmpi-dev openmpi-bin python3-h5py
    # paynter report and studio: npm installs the pages' libraries and
    # puppeteer-core (web/package.json); the report and studio tests load the
    # pages in headless Chromium
    nodejs chromium
    texlive-latex-base  # pdflatex: the test that equations --latex --standalone compiles
    "$@"
  )
  # Debian's nodejs comes without npm (a package of its own); another nodejs
  # (NodeSource's) brings it along and conflicts with it.
  command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "paynter setup: installing ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
      echo "paynter setup: need root to install: ${missing[*]}" >&2; exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq || true
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The browser libraries `paynter report` and `studio` inline (uPlot, KaTeX,
# CodeMirror) and the studio test's puppeteer-core, at the
# versions of web/package-lock.json, when they are missing or older than it.
[ $program_only -eq 1 ] && exit 0
web="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/web"
if [ ! -f "$web/node_modules/.package-lock.json" ] || [ "$web/package-lock.json" -nt "$web/node_modules/.package-lock.json" ]; then
  echo "paynter setup: npm ci in $web" >&2
  (cd "$web" && npm ci --no-audit --no-fund --loglevel=error)
fi
