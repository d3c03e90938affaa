#!/usr/bin/env bash
# The stub python/paynter/__init__.pyi against the module (mypy's stubtest:
# every name, every signature), then mypy on a typed program using the module
# (test_typing.py) with --strict, and on a program that misuses it, which mypy
# must refuse. mypy is Debian's python3-mypy (scripts/setup.sh installs it
# for the tests). Environment as CTest sets it (python/CMakeLists.txt).
set -euo pipefail
python=${PAYNTER_PYTHON:-/usr/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export MYPY_CACHE_DIR="$work/cache"
cd "$work"
printf '[mypy]\n' > mypy.ini
"$python" -m mypy.stubtest paynter --mypy-config-file mypy.ini --allowlist "$here/stubtest_allowlist.txt"
"$python" -m mypy --config-file mypy.ini --strict --no-error-summary "$here/test_typing.py"
cat > misuse.py <<'PY'
import paynter
m = paynter.load("examples/rlc.yaml")
r = m.simulate("10")
s = m.sweep({"R": (1, 2, "3")}, t_end=1)
n: int = m.states
PY
if "$python" -m mypy --config-file mypy.ini --strict misuse.py > misuse.out 2>&1; then
  echo "mypy accepted a program that misuses paynter"; cat misuse.out; exit 1
fi
for line in 3 4 5; do
  grep -q "misuse.py:$line: error" misuse.out || { echo "mypy missed the error on line $line"; cat misuse.out; exit 1; }
done
echo "stub and typed use checked"
