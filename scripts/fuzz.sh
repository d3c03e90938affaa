#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (clang, ASan + UBSan, -DPAYNTER_FUZZ=ON)
# in build-fuzz/ and runs them from the corpus kept in the repository,
# fuzz/corpus/<target>/ (fuzz_model also from examples/*.yaml).
#   scripts/fuzz.sh [SECONDS [TARGET]]
#       SECONDS defaults to 60 (CI's short run). Without TARGET, fuzz_model runs
#       SECONDS and fuzz_expression, fuzz_cli and fuzz_sweep SECONDS/6 each.
#   scripts/fuzz.sh merge TARGET
#       minimizes what the runs found (build-fuzz/corpus/TARGET) together with
#       fuzz/corpus/TARGET into fuzz/corpus/TARGET (libFuzzer's -merge=1); the
#       inputs of findings (named *crash-*, *leak-*, *timeout-*) are kept.
# A finding fails the script and leaves its input as build-fuzz/TARGET-crash-*
# (or leak-*, timeout-*). New inputs go to build-fuzz/corpus/TARGET, and
# later runs continue from it. FUZZ_TIMEOUT (seconds, default 30) is how long
# one input may take; FUZZ_FLAGS adds libFuzzer flags (-runs=N, -jobs=N, ...).
# docs/reliability.md ("Fuzzing campaign") has the long campaign's commands.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${FUZZ_BUILD_DIR:-build-fuzz}
TARGETS=(fuzz_model fuzz_expression fuzz_cli fuzz_sweep)

build() {
  # libFuzzer comes with clang (its runtime with libclang-rt-14-dev on Debian 12).
  bash scripts/setup.sh clang libclang-rt-14-dev
  source scripts/ccache.sh
  cmake -S . -B "$BUILD_DIR" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" -DPAYNTER_FUZZ=ON \
    -DPAYNTER_BUILD_TESTS=OFF -DPAYNTER_BUILD_BENCH=OFF "${PAYNTER_LAUNCHER[@]}" >/dev/null
  cmake --build "$BUILD_DIR" -j"$(nproc)" --target "$@"
}

dict() {
  case "$1" in
    fuzz_model) echo fuzz/model.dict ;;
    fuzz_expression) echo fuzz/expression.dict ;;
    fuzz_cli) echo fuzz/cli.dict ;;
    fuzz_sweep) echo fuzz/sweep.dict ;;
  esac
}

export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp:print_suppressions=0

# run TARGET SECONDS
run() {
  local target=$1 seconds=$2
  local seeds=("fuzz/corpus/$target")
  mkdir -p "$BUILD_DIR/corpus/$target" "fuzz/corpus/$target"
  if [ "$target" = fuzz_model ]; then
    # The examples up to 8 KB (the mutated inputs are as large at most).
    mkdir -p "$BUILD_DIR/seeds"
    find examples -maxdepth 1 -name '*.yaml' -size -8k -exec cp {} "$BUILD_DIR/seeds/" \;
    seeds+=("$BUILD_DIR/seeds")
  fi
  # A hang is an input that takes over FUZZ_TIMEOUT s. The sanitizers slow
  # paynter down several times: a mutated closed chain (bricard.yaml) that takes
  # 0.3 s in a release build took 13 s so on a loaded machine, which must not
  # fail CI.
  # shellcheck disable=SC2086
  "$BUILD_DIR/fuzz/$target" "$BUILD_DIR/corpus/$target" "${seeds[@]}" -dict="$(dict "$target")" -max_len=8192 \
    -timeout="${FUZZ_TIMEOUT:-30}" -rss_limit_mb=4096 -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$BUILD_DIR/$target-" ${FUZZ_FLAGS:-}
}

if [ "${1:-}" = merge ]; then
  target=${2:?"scripts/fuzz.sh merge TARGET"}
  build "$target"
  merged=$(mktemp -d "$BUILD_DIR/merge.XXXXXX")
  mkdir -p "$BUILD_DIR/corpus/$target" "fuzz/corpus/$target"
  # Edges only (-use_counters=0): the inputs that cover an edge no other one
  # covers, a few hundred files (with the counters' buckets, several times more).
  "$BUILD_DIR/fuzz/$target" -merge=1 -use_counters=0 -timeout="${FUZZ_TIMEOUT:-30}" -rss_limit_mb=4096 -max_len=8192 \
    "$merged" "fuzz/corpus/$target" "$BUILD_DIR/corpus/$target"
  # The inputs of findings (fixed, each with its test) stay whatever they add.
  find "fuzz/corpus/$target" -maxdepth 1 -type f \( -name '*crash-*' -o -name '*leak-*' -o -name '*timeout-*' \) \
    -exec cp {} "$merged/" \;
  rm -rf "fuzz/corpus/$target"
  mv "$merged" "fuzz/corpus/$target"
  echo "fuzz/corpus/$target: $(find "fuzz/corpus/$target" -type f | wc -l) files, $(du -sh "fuzz/corpus/$target" | cut -f1)"
  exit 0
fi

SECONDS_TO_RUN=${1:-60}
if [ -n "${2:-}" ]; then
  build "$2"
  run "$2" "$SECONDS_TO_RUN"
else
  build "${TARGETS[@]}"
  run fuzz_model "$SECONDS_TO_RUN"
  for t in "${TARGETS[@]:1}"; do run "$t" $(((SECONDS_TO_RUN + 5) / 6)); done
fi
