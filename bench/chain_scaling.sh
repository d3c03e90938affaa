#!/bin/sh
# Cost of a right-hand-side evaluation of the N-link chain against N
# (examples/make_chain.py: N rods, revolute joints about z and y, 5 N
# constraint forces in one sparse block), by build/bench/bench_chain, in thread
# CPU time, native code at the level the backend chooses (PAYNTER_CFLAGS
# overrides it): "rhs" is one right-hand side by itself (at the initial
# state); "in run" is per evaluation of a run (lagrange-multipliers without the
# projection), from the difference of two runs' times and evaluations, which
# leaves out the start of a run; "analysis" is the CPU time of the analysis
# of the constraints a run starts with (AnalyzeConstraints: a sparse QR of the
# constraint Jacobian).
# With a second build directory (an older commit, say), each N is measured
# with both, one after the other, and the table gives their ratio.
# Writes the table to stdout, the data to docs/img/chain_scaling.dat and a
# log-log plot (gnuplot) to docs/img/chain_scaling.png, with the exponent of
# the cost from the smallest N at or above 16 to the largest.
#
# Usage: bench/chain_scaling.sh [BUILD [BASELINE_BUILD]]   (from the source directory)
#   SIZES="8 16 32 64 128 256" (default), REPS=1 (repetitions, the best kept)
# The native code of each chain is compiled on its first run (about 30 s of
# compiler CPU for N = 256) and cached; so is the baseline's.
set -eu
build=${1:-build}
base=${2:-}
sizes=${SIZES:-8 16 32 64 128 256}
reps=${REPS:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=docs/img/chain_scaling
[ -x "$build/bench/bench_chain" ] || { echo "build $build/bench/bench_chain first" >&2; exit 1; }
[ -z "$base" ] || [ -x "$base/bench/bench_chain" ] || { echo "no $base/bench/bench_chain" >&2; exit 1; }

# Simulated time per N: long enough for some thousands of evaluations.
t_end() {
  if [ "$1" -le 16 ]; then echo 2; elif [ "$1" -le 32 ]; then echo 1; elif [ "$1" -le 64 ]; then echo 0.5
  elif [ "$1" -le 128 ]; then echo 0.2; else echo 0.1; fi
}
# rhs us, in-run us, build CPU, compiler CPU and analysis CPU from one bench_chain run
# (an older bench_chain prints no analysis column: "-").
measure() {
  "$1/bench/bench_chain" --reps "$reps" --t-end "$2" "$3" |
    awk 'NR == 1 { a = index($0, "analysis") > 0 } NR == 2 { print $8, $7, $2, $3, (a ? $9 : "-") }'
}

printf '%5s %9s %10s %12s %10s %8s %13s %14s %18s %8s\n' N unknowns "rhs (us)" "in run (us)" "build (s)" "cc (s)" \
  "analysis (s)" "before: rhs" "before: in run" ratio
: > "$tmp/data"
for n in $sizes; do
  python3 examples/make_chain.py "$n" -o "$tmp/chain$n.yaml"
  t=$(t_end "$n")
  set -- $(measure "$build" "$t" "$tmp/chain$n.yaml")
  rhs=$1 run=$2 bcpu=$3 ccpu=$4 acpu=$5
  brhs=- brun=- ratio=-
  if [ -n "$base" ]; then
    set -- $(measure "$base" "$t" "$tmp/chain$n.yaml")
    brhs=$1 brun=$2
    ratio=$(awk -v a="$rhs" -v b="$brhs" 'BEGIN { printf "%.2f", a / b }')
  fi
  printf '%5d %9d %10.1f %12.1f %10.2f %8.2f %13s %14s %18s %8s\n' "$n" $((5 * n)) "$rhs" "$run" "$bcpu" "$ccpu" \
    "$acpu" "$brhs" "$brun" "$ratio"
  echo "$n $rhs $run $brhs $brun" >> "$tmp/data"
done
# The exponent p of cost ~ N^p between the first N >= 16 and the last.
awk 'function p(a, b) { return log(b / a) / log(n1 / n0) }
     $1 >= 16 { if (!n0) { n0 = $1; split($0, f0) } n1 = $1; split($0, f1) }
     END { if (n1 > n0) {
             printf "exponent from N = %d to %d: rhs %.2f, in run %.2f", n0, n1, p(f0[2], f1[2]), p(f0[3], f1[3])
             if (f0[4] != "-") printf " (before: %.2f, %.2f)", p(f0[4], f1[4]), p(f0[5], f1[5])
             printf "\n" } }' "$tmp/data"
cp "$tmp/data" "$out.dat"
plot="'$out.dat' using 1:2 with linespoints pt 7 lc 1 title 'rhs by itself', '$out.dat' using 1:3 with linespoints pt 6 lc 1 dt 3 title 'per evaluation in a run'"
[ -z "$base" ] || plot="$plot, '$out.dat' using 1:4 with linespoints pt 5 lc 2 title 'before: rhs by itself', '$out.dat' using 1:5 with linespoints pt 4 lc 2 dt 3 title 'before: in a run'"
gnuplot <<EOF
set terminal pngcairo size 720,480
set output '$out.png.tmp'
set logscale xy
set xlabel 'links N (5 N constraint forces)'
set ylabel 'CPU time per right-hand side (us)'
set key top left
set grid
first = $(awk '$1 >= 16 { print $2; exit }' "$tmp/data")
n0 = $(awk '$1 >= 16 { print $1; exit }' "$tmp/data")
plot $plot, first * x / n0 with lines dt 2 title 'proportional to N'
EOF
mv "$out.png.tmp" "$out.png"
echo "wrote $out.dat and $out.png"
