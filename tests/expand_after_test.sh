#!/usr/bin/env bash
# `paynter expand --after PASS` (docs/commands.md): after every pass of the
# front end, the model written reads back as the same model — its equations
# (state form, and Lagrange's for a mechanism) equal the original file's — and
# an unknown pass or `read` is a located error.
#   usage: expand_after_test.sh PAYNTER_EXE SOURCE_DIR
set -uo pipefail
exe=$1; src=$2
cd "$src" || exit 1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"
failed=0
check_same() {  # FILE WRITTEN ARGS...: equations of both equal
  local file=$1 written=$2; shift 2
  "$exe" equations "$file" "$@" >"$work/a" 2>&1 || { echo "FAIL: equations $file $*"; cat "$work/a"; failed=1; return; }
  "$exe" equations "$written" "$@" >"$work/b" 2>&1 || { echo "FAIL: equations of $written ($*)"; cat "$work/b"; failed=1; return; }
  # the model's own name and file differ; everything else must not
  if ! diff <(grep -v "^model \|^# model\|file:" "$work/a") <(grep -v "^model \|^# model\|file:" "$work/b") >"$work/d"; then
    echo "FAIL: $file written after $pass reads back with other equations ($*):"; head -20 "$work/d"; failed=1
  fi
}
for model in examples/dc_motor_load.yaml examples/rigid_body_vector.yaml examples/B1_pendulum_3d.yaml \
             examples/double_pendulum_library.yaml examples/B2_slider_crank_isostatic.yaml; do
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
