#!/usr/bin/env bash
# The whole test suite built with AddressSanitizer and UndefinedBehaviorSanitizer
# (GCC, -DPAYNTER_SANITIZE=ON) in build-asan/, then run through CTest. Any
# sanitizer report fails the test that met it.
#
# The native backend stays on under the sanitizers: the C that paynter
# generates is compiled by cc without instrumentation and loaded into the
# instrumented process, so the tests still cover the cache, the loading and
# the fallback, and ASan checks every buffer paynter hands to the loaded code.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
BUILD_DIR=${ASAN_BUILD_DIR:-build-asan}
source scripts/ccache.sh
# -O1 with line tables: a quicker build than -O3 and readable reports.
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" -DPAYNTER_SANITIZE=ON -DPAYNTER_BUILD_BENCH=OFF "${PAYNTER_LAUNCHER[@]}" >/dev/null
# Also for the build: CTest's test discovery runs the test programs.
export ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:check_initialization_order=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp:print_suppressions=0
cmake --build "$BUILD_DIR" -j"$(nproc)"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)" --timeout 900
