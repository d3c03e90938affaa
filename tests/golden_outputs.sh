#!/usr/bin/env bash
# Golden outputs of the command line: every line of tests/golden/outputs.txt is
# a paynter command whose standard output (or the file it writes, {out}) must
# equal tests/golden/outputs/NAME byte for byte. Lines marked `fixed` compare
# numbers and generated code, which are the same in every run only when the
# program is linked at a fixed address (PAYNTER_STATIC_PROGRAM: GiNaC's term
# order follows addresses); elsewhere they are skipped, and said so. Lines
# marked `order` print expressions in GiNaC's own term order (expand's texts,
# the zcp and parasitic notes), which follows the addresses of the program's
# type names and so may change with any change to the program: they are
# compared line by line as multisets of characters without '+' and '-' (a
# changed name, number, product or line is seen; the order of a sum's terms,
# and which sign GiNaC gives a sum factored out, is not). The simulations of
# the same models (csv.*) and `expand_after` check those texts' meaning.
#   usage: golden_outputs.sh PAYNTER_EXE SOURCE_DIR FIXED_ADDRESS(0|1) [NAME-REGEX]
# PAYNTER_UPDATE_GOLDEN=1 rewrites the files (review the diff before committing).
set -uo pipefail
exe=$1; src=$2; fixed_address=$3; only=${4:-}
cd "$src" || exit 1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"   # cold: no stage or native cache of another run
failed=0; checked=0; skipped=0
while IFS='|' read -r name flags args; do
  [[ -z "${name// /}" || "$name" == \#* ]] && continue
  name=${name// /}; flags=${flags// /}
  [[ -n "$only" && ! "$name" =~ $only ]] && continue
  if [[ ",$flags," == *",fixed,"* && "$fixed_address" != 1 ]]; then skipped=$((skipped + 1)); continue; fi
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
  if [[ ",$flags," == *",order,"* ]]; then
    # each line's characters sorted: the terms' order does not count
    norm() { python3 -c 'import sys; [print("".join(sorted(l.rstrip("\n").replace("+", "").replace("-", "")))) for l in open(sys.argv[1])]' "$1"; }
    if ! diff <(norm "$golden") <(norm "$got") >/dev/null; then
      echo "FAIL $name: paynter $cmd differs from $golden (beyond the order of terms):"; diff "$golden" "$got" | head -20
      failed=$((failed + 1))
    fi
  elif ! cmp -s "$got" "$golden"; then
    echo "FAIL $name: paynter $cmd differs from $golden:"; diff "$golden" "$got" | head -20; failed=$((failed + 1))
  fi
  checked=$((checked + 1))
done < tests/golden/outputs.txt
echo "golden outputs: $checked checked, $failed failed, $skipped skipped (numbers and C: program not at a fixed address)"
[ $failed -eq 0 ]
