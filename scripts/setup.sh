#!/usr/bin/env bash
# Installs the Debian packages paynter builds and runs with, if any are missing.
# Idempotent: does nothing when everything is present. Needs root (or sudo) only to install.
# Extra packages may be named as arguments (scripts/fuzz.sh asks for clang).
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config
  libeigen3-dev libsundials-dev libginac-dev libcln-dev libsuitesparse-dev
  libyaml-cpp-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  graphviz gnuplot-nox
  # the Python module (docs/python.md): pybind11 and Debian's Python with numpy;
  # pytest runs its tests, pandas and matplotlib serve Result.to_pandas and plot
  pybind11-dev python3-dev python3-numpy python3-pytest python3-pandas python3-matplotlib
  unzip  # the FMU test unpacks exported FMUs (tests/fmi_importer.cc)
  # sweeps: HDF5 output, MPI ranks (mpirun), and h5py to read the files in the tests
  libhdf5-dev libopenmpi-dev openmpi-bin python3-h5py
  "$@"
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

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
