#!/usr/bin/env bash
# Builds the libFuzzer target fuzz_model (clang, ASan + UBSan, -DPAYNTER_FUZZ=ON)
# in build-fuzz/ and runs it from a seed corpus of examples/*.yaml.
#   scripts/fuzz.sh [SECONDS]   default 60 (CI's short run); a finding fails
# the script and leaves its input as build-fuzz/crash-* (or leak-*, timeout-*).
# Longer runs keep their corpus in build-fuzz/corpus and continue from it.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN=${1:-60}
BUILD_DIR=${FUZZ_BUILD_DIR:-build-fuzz}
# libFuzzer comes with clang (its runtime with libclang-rt-14-dev on Debian 12).
bash scripts/setup.sh clang libclang-rt-14-dev
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$BUILD_DIR" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" -DPAYNTER_FUZZ=ON \
  -DPAYNTER_BUILD_TESTS=OFF -DPAYNTER_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" --target fuzz_model
# Seeds: the examples up to 8 KB (the mutated inputs are as large at most).
mkdir -p "$BUILD_DIR/corpus" "$BUILD_DIR/seeds"
find examples -maxdepth 1 -name '*.yaml' -size -8k -exec cp {} "$BUILD_DIR/seeds/" \;
export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp:print_suppressions=0
# A hang is an input that takes over 30 s. The sanitizers slow paynter down
# several times: a mutated closed chain (bricard.yaml) that takes 0.3 s in a
# release build took 13 s so on a loaded machine, which must not fail CI.
"$BUILD_DIR/fuzz/fuzz_model" "$BUILD_DIR/corpus" "$BUILD_DIR/seeds" -dict=fuzz/model.dict -max_len=8192 -timeout=30 \
  -rss_limit_mb=4096 -max_total_time="$SECONDS_TO_RUN" -print_final_stats=1 -artifact_prefix="$BUILD_DIR/"
