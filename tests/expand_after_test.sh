#!/usr/bin/env bash
# `paynter expand --after PASS` (docs/commands.md): after every pass of the
# front end, the model written reads back as the same model — the same output
# columns and the same motion as the original file (state form, and Lagrange's
# for a mechanism still under multibody:), to 1e-8 — and an unknown pass or
# `read` is a located error. (Its equations are equal, not always printed
# alike: GiNaC may write a re-read expression in another equal form.)
#   usage: expand_after_test.sh PAYNTER_EXE SOURCE_DIR
set -uo pipefail
exe=$1; src=$2
cd "$src" || exit 1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"
failed=0
run() {  # FILE OUT ARGS...: a short, tight run
  local file=$1 out=$2; shift 2
  "$exe" simulate "$file" --t-end 0.5 --dt-out 0.05 --rtol 1e-10 --atol 1e-12 --backend tape "$@" -o "$out" \
    >"$work/log" 2>&1 || { echo "FAIL: simulate $file $*"; cat "$work/log"; return 1; }
}
check_same() {  # FILE WRITTEN ARGS...: the same columns and the same motion (to 1e-8, rounding apart)
  local file=$1 written=$2; shift 2
  run "$file" "$work/a.csv" "$@" || { failed=1; return; }
  run "$written" "$work/b.csv" "$@" || { failed=1; return; }
  if ! python3 - "$work/a.csv" "$work/b.csv" <<'PY'; then
import csv, sys
a, b = (list(csv.reader(open(f))) for f in sys.argv[1:3])
if a[0] != b[0] or len(a) != len(b):
    sys.exit("columns or rows differ: %s / %s" % (a[0], b[0]))
worst = max(abs(float(x) - float(y)) / (1 + abs(float(x))) for ra, rb in zip(a[1:], b[1:]) for x, y in zip(ra, rb))
if worst > 1e-8:
    sys.exit("largest relative difference %.3g" % worst)
PY
    echo "FAIL: $file written after $pass runs otherwise ($*)"; failed=1
  fi
}
for model in examples/dc_motor_load.yaml examples/rigid_body_vector.yaml examples/B1_pendulum_3d.yaml \
             examples/double_pendulum_library.yaml examples/B4_spatial_arm.yaml; do
  for pass in submodels overrides poses multibody vector-bonds parasitic energy; do
    out="$work/$(basename "$model" .yaml).$pass.yaml"
    if ! "$exe" expand "$model" --after "$pass" -o "$out" 2>"$work/err"; then
      echo "FAIL: expand $model --after $pass"; cat "$work/err"; failed=1; continue
    fi
    check_same "$model" "$out"
    # a mechanism still written under multibody: also gives the same Lagrange equations
    if grep -q "^multibody:" "$out"; then check_same "$model" "$out" --form lagrange2; fi
  done
done
for bad in read nonesuch; do
  if "$exe" expand examples/rlc.yaml --after "$bad" -o "$work/x.yaml" 2>"$work/err"; then
    echo "FAIL: expand --after $bad succeeded"; failed=1
  elif ! grep -q "examples/rlc.yaml" "$work/err" || grep -q "internal" "$work/err" || [ -e "$work/x.yaml" ]; then
    echo "FAIL: expand --after $bad: not a located error, or a file written:"; cat "$work/err"; failed=1
  fi
done
[ $failed -eq 0 ] && echo "expand --after: every pass reads back as the same model"
exit $failed
