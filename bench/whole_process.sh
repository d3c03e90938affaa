#!/bin/sh
# Whole-process times of `paynter simulate` against the hand-written
# reference (bench/handwritten_main.cc, the Dormand–Prince loop of
# bench/handwritten.h): B1 and B3 (Lagrange's equations of the second kind)
# over 10 s, dopri5 at the same tolerances, both writing the same 1001 CSV
# rows. paynter's native code comes from its cache (a first run warms it).
# Prints the best (least disturbed) of each (hyperfine, one run of this
# script for all figures) and their ratio, and checks that both files hold
# the same rows (within 1e-6, relative above 1). With --instructions, counts
# the instructions each process executes instead (valgrind's callgrind: a
# measure the other processes on the machine do not disturb).
#
# Usage: bench/whole_process.sh [runs | --instructions]   (from the source directory, after a build)
set -eu
runs=${1:-40}
build=${BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v hyperfine >/dev/null || { echo "hyperfine is needed (apt-get install hyperfine)" >&2; exit 1; }

unit=ms
[ "$runs" = --instructions ] && unit=Minstr
printf '%-14s %7s %12s %12s %7s\n' model rtol "paynter $unit" "hand $unit" ratio
for case in "b1 B1_pendulum state 1e-6 1e-9" "b1 B1_pendulum state 1e-10 1e-12" \
            "b3 B3_quick_return lagrange2 1e-6 1e-9" "b3 B3_quick_return lagrange2 1e-10 1e-12"; do
  set -- $case
  hand="$build/bench/handwritten $1 $4 $5 $tmp/hand.csv"
  paynter="$build/paynter simulate examples/$2.yaml --form $3 --t-end 10 --rtol $4 --atol $5 -o $tmp/paynter.csv"
  $paynter >/dev/null 2>&1
  $hand 2>/dev/null
  python3 - "$tmp/paynter.csv" "$tmp/hand.csv" <<'PY'
import sys
a = open(sys.argv[1]).read().split("\n")
b = open(sys.argv[2]).read().split("\n")
assert a[0] == b[0] and len(a) == len(b), "different columns or row counts"
worst = max(abs(float(x) - float(y)) / max(1.0, abs(float(x)))
            for la, lb in zip(a[1:], b[1:]) if la for x, y in zip(la.split(","), lb.split(",")))
assert worst < 1e-6, "rows differ by %g" % worst
PY
  if [ "$runs" = --instructions ]; then
    count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 | sed -n 's/.*refs: *//p' | tr -d ,; }
    p=$(count $paynter)
    h=$(count $hand)
    python3 -c "import sys; p, h = int(sys.argv[1]) / 1e6, int(sys.argv[2]) / 1e6; n = sys.argv[3].split('_')[0]
print('%-14s %7s %12.2f %12.2f %7.2f' % (n + (' lagrange2' if n == 'B3' else ''), sys.argv[4], p, h, p / h))" \
      "$p" "$h" "$2" "$4"
    continue
  fi
  hyperfine -N --warmup 3 --runs "$runs" --export-json "$tmp/h.json" "$paynter" "$hand" >/dev/null 2>&1
  python3 - "$tmp/h.json" "$2" "$4" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
p, h = min(r[0]["times"]) * 1e3, min(r[1]["times"]) * 1e3
name = sys.argv[2].split("_")[0] + (" lagrange2" if sys.argv[2].startswith("B3") else "")
print("%-14s %7s %12.2f %12.2f %7.2f" % (name, sys.argv[3], p, h, p / h))
PY
done
