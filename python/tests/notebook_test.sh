#!/usr/bin/env bash
# Executes the tutorial notebook docs/tutorial.ipynb as a reader would
# (Debian's jupyter-nbconvert and the python3 kernel of python3-ipykernel,
# which scripts/setup.sh installs for the tests), in a scratch directory whose
# examples/ is the repository's; a cell that raises fails the test. Then checks
# what the cells computed (tutorial_check.py).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=${PAYNTER_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ln -s "$source_dir/examples" "$work/examples"
cp "$source_dir/docs/tutorial.ipynb" "$work/"
cd "$work"
export JUPYTER_CONFIG_DIR="$work/jupyter" JUPYTER_DATA_DIR="$work/jupyter-data" JUPYTER_RUNTIME_DIR="$work/runtime"
export IPYTHONDIR="$work/ipython" PYDEVD_DISABLE_FILE_VALIDATION=1
# The kernel shows figures inline, as in a notebook opened by hand (CTest sets
# MPLBACKEND=Agg for the other tests).
unset MPLBACKEND
jupyter nbconvert --to notebook --execute --ExecutePreprocessor.timeout=300 \
  --ExecutePreprocessor.kernel_name=python3 --output executed.ipynb tutorial.ipynb
"${PAYNTER_PYTHON:-/usr/bin/python3}" "$here/tutorial_check.py" executed.ipynb
