#!/usr/bin/env bash
# The figures of B3 (the quick return mechanism, examples/B3_quick_return.yaml):
# the kinds of Figs. 8-17 of Maini & Vaz (seed 000), from one 10 s simulation
# with tau = 2 N m.
#
#   bash examples/B3_figures.sh [paynter-binary] [outdir]     (defaults: build/paynter, out/b3)
#
# Writes OUTDIR/b3.csv and one PNG per figure (gnuplot, through `paynter plot`).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
paynter="${1:-$root/build/paynter}"
out="${2:-$root/out/b3}"

if [[ ! -x "$paynter" ]]; then
  echo "B3_figures.sh: no paynter binary at '$paynter' (build it, or pass its path as the first argument)" >&2
  exit 1
fi
mkdir -p "$out"

# The crank reaches ~200 rad/s, so outputs every 1 ms (0.2 rad of crank at
# most) keep the curves against theta1 smooth.
"$paynter" simulate "$root/examples/B3_quick_return.yaml" --t-end 10 --rtol 1e-10 --atol 1e-12 \
  --dt-out 1e-3 -o "$out/b3.csv"

csv="$out/b3.csv"
plot() {  # plot NAME TITLE ARGS...
  local name="$1" title="$2"
  shift 2
  "$paynter" plot "$csv" "$@" --title "$title" -o "$out/$name.png"
  echo "$out/$name.png"
}

plot fig08_O1_trajectory   "Fig. 8: trajectory of O1 (yO1 vs xO1) [m]"        yO1 -x xO1
plot fig09_theta2          "Fig. 9: rocker angle theta2 vs theta1 [rad]"      theta2 -x theta1
plot fig10_theta2dot       "Fig. 10: rocker speed theta2dot vs theta1 [rad/s]" theta2dot -x theta1
plot fig11_C2              "Fig. 11: centre of mass C2 of the rocker vs time [m]" xC2 yC2
plot fig12_theta3          "Fig. 12: rod angle theta3 vs theta1 [rad]"        theta3 -x theta1
plot fig13_theta3dot       "Fig. 13: rod speed theta3dot vs theta1 [rad/s]"   theta3dot -x theta1
plot fig14_C3_trajectory   "Fig. 14: trajectory of C3 (yC3 vs xC3) [m]"       yC3 -x xC3
plot fig15_C5              "Fig. 15: centre of mass C5 of the ram vs time [m]" xC5 yC5
plot fig16_Lx              "Fig. 16: Lx = |O2 O1| vs time [m]"                Lx
plot fig17_momenta         "Fig. 17: angular momenta vs theta1 [N m s]"       h1 h2 h3 -x theta1
plot energy                "work of tau, dissipated and kinetic energy [J]"  W_tau D_R T
