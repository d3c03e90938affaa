#!/usr/bin/env bash
# Installs the module with pip into a new virtual environment (the
# repository's pyproject.toml, with the build's extension), as
# docs/python.md says, then imports it there and simulates B1 with it; the
# numbers equal those of the build's module. No network: pip is told not to
# look at any index. Environment as CTest sets it (python/CMakeLists.txt).
set -euo pipefail
python=${PAYNTER_PYTHON:-/usr/bin/python3}
source_dir=${PAYNTER_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m venv --system-site-packages "$work/v"
# pip builds in a copy of nothing: it reads the source tree and writes only
# into the build directory ($PAYNTER_BUILD_DIR) and the environment.
PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 "$work/v/bin/pip" install -q --no-build-isolation "$source_dir"
cd "$work"
# The build's module is not on the path here: PYTHONPATH is cleared.
env -u PYTHONPATH "$work/v/bin/python" - "$source_dir" <<'PY'
import os, sys
import numpy as np
import paynter
source = sys.argv[1]
where = os.path.dirname(paynter.__file__)
assert where.startswith(os.path.realpath(sys.prefix)) or where.startswith(sys.prefix), where
assert os.path.isfile(os.path.join(where, "__init__.pyi")) and os.path.isfile(os.path.join(where, "py.typed"))
r = paynter.simulate(os.path.join(source, "examples", "B1_pendulum.yaml"), t_end=10, rtol=1e-8, atol=1e-10,
                     dt_out=0.01)
g = r["gamma"]
# Overdamped: creeps down towards -pi/2 without passing it.
assert r.columns == ["t", "gamma", "gammadot", "xG", "yG"] and len(r) == 1001
assert np.all(np.diff(g) <= 0) and -np.pi / 2 < g[-1] < -1.5, g[-1]
np.save("venv_b1.npy", r.data)
print("paynter %s from %s: B1 gamma(10) = %.6f" % (paynter.__version__, where, g[-1]))
PY
# The same numbers as the build's module.
"$python" - <<'PY'
import os, numpy as np, paynter
r = paynter.simulate(os.path.join(os.environ["PAYNTER_SOURCE_DIR"], "examples", "B1_pendulum.yaml"), t_end=10,
                     rtol=1e-8, atol=1e-10, dt_out=0.01)
assert np.array_equal(np.load("venv_b1.npy"), r.data), "the installed module's numbers differ from the build's"
PY
echo "installed into a virtual environment and ran B1"
