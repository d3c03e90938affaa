#!/usr/bin/env bash
# The installed CMake package, as another project uses it: installs the build
# into a temporary prefix, configures and builds examples/cpp/ there on its own
# (find_package(paynter), -Wall -Wextra -Werror), runs the example and checks
# what it prints. Usage: cpp_package_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/paynter-package-XXXXXX")
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -x "$work/prefix/bin/paynter"
test -f "$work/prefix/lib/cmake/paynter/paynterConfig.cmake"
test -f "$work/prefix/lib/cmake/paynter/paynterConfigVersion.cmake"
test -f "$work/prefix/include/paynter/paynter.h"
cp -r "$src/examples/cpp" "$work/example"   # outside the source tree
cmake -S "$work/example" -B "$work/example-build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" >/dev/null
cmake --build "$work/example-build" >/dev/null
# The example's own model, simulated by the installed library (native code
# needs no file of the source tree): it checks the static deflection itself.
out=$(cd "$work" && "$work/example-build/paynter_api_example")
echo "$out"
grep -q "static deflection F/k = 0.2" <<<"$out"
grep -q "backend native" <<<"$out"
# The installed program runs a model too.
"$work/prefix/bin/paynter" check "$src/examples/rlc.yaml" | grep -q "^ok$"
# Its sweeps' HDF5 and MPI module sits where the installed program looks for it.
test -f "$work/prefix/lib/paynter/libpaynter_sweep_io.so"
if grep -q "PAYNTER_HDF5:BOOL=ON" "$build/CMakeCache.txt"; then
  "$work/prefix/bin/paynter" sweep "$src/examples/B1_pendulum.yaml" --t-end 0.1 --param B=1:2:2 -o "$work/b1.h5" 2>/dev/null
  test -s "$work/b1.h5"
fi
echo "cpp package: ok"
