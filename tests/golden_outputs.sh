#!/usr/bin/env bash
# Golden outputs of the command line: every line of tests/golden/outputs.txt is
# a paynter command whose standard output (or the file it writes, {out}) must
# equal tests/golden/outputs/NAME byte for byte. Lines marked `fixed` compare
# numbers and generated code, which are the same in every run only when the
# program is linked at a fixed address (PAYNTER_STATIC_PROGRAM: GiNaC's term
# order follows addresses); elsewhere they are skipped, and said so.
#
# The texts of expressions (equations, latex, expand) hold GiNaC's choices of
# term order and form, which follow the addresses of the program's type names
# and so may change with any change to the program, or with the directory it
# was built in. A canary says whether this program makes the choices the
# golden files were written with: expand.B1_pendulum_3d (printed in GiNaC's
# own order). When it differs, those texts are skipped, and said so; the rest
# (causality, check and the generated C, which do not depend on those
# choices) is compared byte for byte all the same. A CSV that differs in its
# bytes must agree to 1e-9 of each column's scale (tests/csv_close.py): the
# order in which terms are summed moves the last bits of a mechanism's
# Lagrange forms.
#   usage: golden_outputs.sh PAYNTER_EXE SOURCE_DIR FIXED_ADDRESS(0|1) [NAME-REGEX]
# PAYNTER_UPDATE_GOLDEN=1 rewrites the files (review the diff before committing).
set -uo pipefail
exe=$1; src=$2; fixed_address=$3; only=${4:-}
cd "$src" || exit 1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"   # cold: no stage or native cache of another run
failed=0; checked=0; skipped=0; texts_skipped=0; close_only=0
same_order=1
if [ -z "${PAYNTER_UPDATE_GOLDEN:-}" ]; then
  "$exe" expand examples/B1_pendulum_3d.yaml -o "$work/canary" >/dev/null 2>&1
  cmp -s "$work/canary" tests/golden/outputs/expand.B1_pendulum_3d || same_order=0
fi
while IFS='|' read -r name flags args; do
  [[ -z "${name// /}" || "$name" == \#* ]] && continue
  name=${name// /}; flags=${flags// /}
  [[ -n "$only" && ! "$name" =~ $only ]] && continue
  if [[ ",$flags," == *",fixed,"* && "$fixed_address" != 1 ]]; then skipped=$((skipped + 1)); continue; fi
  if [[ $same_order == 0 && "$name" =~ ^(equations|latex|expand)[.] ]]; then texts_skipped=$((texts_skipped + 1)); continue; fi
  out="$work/$name.out"
  cmd=${args//\{out\}/$out}
  # shellcheck disable=SC2086  # the arguments are words of the list, no user input
  "$exe" $cmd >"$work/stdout" 2>"$work/stderr"
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAIL $name: exit $rc: paynter $cmd"; cat "$work/stderr"; failed=$((failed + 1)); continue
  fi
  got="$work/stdout"; [[ "$args" == *"{out}"* ]] && got="$out"
  golden="tests/golden/outputs/$name"
  if [ -n "${PAYNTER_UPDATE_GOLDEN:-}" ]; then cp "$got" "$golden"; checked=$((checked + 1)); continue; fi
  if [ ! -f "$golden" ]; then echo "FAIL $name: no golden file $golden (PAYNTER_UPDATE_GOLDEN=1)"; failed=$((failed + 1)); continue; fi
  if ! cmp -s "$got" "$golden"; then
    # A CSV's last bits follow the order in which GiNaC's terms are summed,
    # which another build of the program may choose otherwise (see above):
    # the numbers must agree to 1e-9 of each column's scale.
    if [[ "$name" == csv.* ]] && close=$(python3 "$src/tests/csv_close.py" "$golden" "$got" 1e-9); then
      echo "same to rounding: $name: $close"; close_only=$((close_only + 1))
    else
      echo "FAIL $name: paynter $cmd differs from $golden:"; [[ "$name" == csv.* ]] && echo "  $close"
      diff "$golden" "$got" | head -20; failed=$((failed + 1))
    fi
  fi
  checked=$((checked + 1))
done < tests/golden/outputs.txt
echo "golden outputs: $checked checked, $failed failed, $skipped skipped (numbers and C: program not at a fixed address)"
if [ $close_only -gt 0 ]; then
  echo "golden outputs: $close_only CSVs equal to rounding, not byte for byte (another order of GiNaC's terms)"
fi
if [ $texts_skipped -gt 0 ]; then
  echo "golden outputs: $texts_skipped texts of expressions skipped: this program orders GiNaC's terms otherwise than" \
       "the one that wrote tests/golden/outputs (expand.B1_pendulum_3d differs); PAYNTER_UPDATE_GOLDEN=1 rewrites them"
fi
[ $failed -eq 0 ]
