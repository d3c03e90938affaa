#!/usr/bin/env bash
# Installs missing Debian packages, then configures and builds paynter in build/.
#   build.sh             everything: the program, the Python module, the tests, the benchmarks
#   build.sh --program   the program alone (build/paynter), with the packages it needs only
#                        (scripts/run.sh: the main job does not wait for what only the tests need)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cache="$BUILD_DIR/CMakeCache.txt"
source scripts/ccache.sh
if [ "${1:-}" = "--program" ]; then
  bash scripts/setup.sh --program
  # A build configured before keeps its options; a new one leaves the tests
  # and benchmarks out (their packages may not be installed).
  if [ ! -f "$cache" ]; then
    cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DPAYNTER_BUILD_TESTS=OFF -DPAYNTER_BUILD_BENCH=OFF \
      -DPAYNTER_PROGRAM_ONLY=ON "${PAYNTER_LAUNCHER[@]}" >/dev/null
  fi
  cmake --build "$BUILD_DIR" -j"$(nproc)" --target paynter_cli
  exit 0
fi
bash scripts/setup.sh
# A build configured for the program alone is configured again, from scratch
# (its objects are kept): its options were chosen without the tests' packages.
if [ -f "$cache" ] && grep -q '^PAYNTER_PROGRAM_ONLY:BOOL=ON' "$cache"; then
  rm -f "$cache"
fi
if [ ! -f "$cache" ]; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "${PAYNTER_LAUNCHER[@]}" >/dev/null
fi
cmake --build "$BUILD_DIR" -j"$(nproc)"
