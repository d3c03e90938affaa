#!/usr/bin/env bash
# `paynter equations --latex --standalone` writes a document that compiles as
# it is: pdflatex (Debian's texlive-latex-base) on B1, B3, B4 and the RLC
# circuit, stopping at the first error.
set -euo pipefail
exe=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
for m in B1_pendulum B3_quick_return B4_spatial_arm rlc; do
  "$exe" equations "$src/examples/$m.yaml" --latex --standalone > "$m.tex"
  if ! pdflatex -interaction=nonstopmode -halt-on-error "$m.tex" > "$m.out" 2>&1; then
    echo "$m: pdflatex failed:" >&2
    grep -A3 '^!' "$m.out" >&2 || tail -20 "$m.out" >&2
    exit 1
  fi
  [ -s "$m.pdf" ] || { echo "$m: no PDF" >&2; exit 1; }
  echo "$m: $(grep -o 'Output written.*' "$m.out")"
done
