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
# Its data (share/paynter): the library example, from outside the source tree.
lib="$work/prefix/share/paynter/library"
test -f "$lib/electrical/dc_motor.yaml"
cp "$src/examples/dc_motor_load.yaml" "$work/"
(cd "$work" && env -u PAYNTER_LIBRARY "$work/prefix/bin/paynter" simulate dc_motor_load.yaml --t-end 0.5 -o motor.csv)
head -1 "$work/motor.csv" | grep -q "motor.omega"
# A component that only the installed library holds shows that the installed
# program reads that library, not the source tree's: an RC discharge, v = 6 exp(-t/RC).
mkdir "$lib/installed_only"
sed 's/^name: resistor/name: installed_resistor/' "$lib/electrical/resistor.yaml" >"$lib/installed_only/resistor.yaml"
cat >"$work/rc.yaml" <<'MODEL'
instances:
  - {name: c, use: "lib:electrical/capacitor", parameters: {C: 0.5, v0: 6}}
  - {name: r, use: "lib:installed_only/resistor", parameters: {R: 2}}
bonds: [[c.p, r.p]]
MODEL
(cd "$work" && env -u PAYNTER_LIBRARY "$work/prefix/bin/paynter" simulate rc.yaml --t-end 1 --rtol 1e-10 --atol 1e-12 -o rc.csv)
awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "c.v") col = i }
         END { v = $col; e = 6 * exp(-1); if (!col || v - e > 1e-6 || e - v > 1e-6) { print "c.v(1) = " v ", expected " e; exit 1 } }' \
  "$work/rc.csv"
# Its report page reads the installed web/ files (a mark added to the installed
# style shows in the page), when the build's web/ has its npm libraries.
if [ -d "$src/web/node_modules" ]; then
  echo "/* installed-web-mark */" >>"$work/prefix/share/paynter/web/report.css"
  (cd "$work" && env -u PAYNTER_WEB_DIR "$work/prefix/bin/paynter" report rc.yaml --t-end 1 -o rc.html)
  grep -q "installed-web-mark" "$work/rc.html"
fi
# Its sweeps' HDF5 and MPI module sits where the installed program looks for it.
test -f "$work/prefix/lib/paynter/libpaynter_sweep_io.so"
if grep -q "PAYNTER_HDF5:BOOL=ON" "$build/CMakeCache.txt"; then
  "$work/prefix/bin/paynter" sweep "$src/examples/B1_pendulum.yaml" --t-end 0.1 --param B=1:2:2 -o "$work/b1.h5" 2>/dev/null
  test -s "$work/b1.h5"
fi
echo "cpp package: ok"
