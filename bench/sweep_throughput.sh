#!/bin/sh
# Sweep throughput: N runs of B1 (examples/B1_pendulum.yaml) over its pivot
# damping B, 1 s each with the default tolerances (dopri5, rtol 1e-6, atol
# 1e-9) and 101 output rows, into one HDF5 file: with 1 thread, 2 threads and
# 2 MPI ranks of 1 thread. Prints, for each, the wall time, the CPU time
# (user + system, of the process and its children: mpirun's ranks) and the
# runs per second of each; the CPU figure is the one that other processes on
# the machine do not disturb. Checks that the three files are byte-identical.
#
# Usage: bench/sweep_throughput.sh [N]   (from the source directory, after a build; N = 10000)
set -eu
n=${1:-10000}
build=${BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
model=examples/B1_pendulum.yaml
args="sweep $model --t-end 1 --dt-out 0.01 --param B=0:20:$n"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CI=true
"$build/paynter" sweep $model --t-end 1 --param B=0:1:2 -o "$tmp/warm.h5" 2>/dev/null  # caches warm
measure() {  # label, command...
  label=$1
  shift
  /usr/bin/time -f "%e %U %S" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  read -r wall user sys <"$tmp/time"
  awk -v l="$label" -v n="$n" -v w="$wall" -v u="$user" -v s="$sys" 'BEGIN {
    c = u + s; printf "%-22s %8.2f %8.2f %12.0f %12.0f\n", l, w, c, n / w, (c > 0 ? n / c : 0) }'
}
printf '%-22s %8s %8s %12s %12s\n' "$n runs of B1" "wall s" "CPU s" "runs/s wall" "runs/CPU s"
measure "1 thread" "$build/paynter" $args --threads 1 -o "$tmp/t1.h5"
measure "2 threads" "$build/paynter" $args --threads 2 -o "$tmp/t2.h5"
if command -v mpirun >/dev/null; then
  measure "2 ranks x 1 thread" mpirun --oversubscribe -np 2 "$build/paynter" $args --threads 1 -o "$tmp/r2.h5"
  cmp "$tmp/t1.h5" "$tmp/r2.h5"
fi
cmp "$tmp/t1.h5" "$tmp/t2.h5"
echo "files byte-identical ($(stat -c %s "$tmp/t1.h5") bytes); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
