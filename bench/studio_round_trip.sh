#!/bin/sh
# The studio's round trips as a page makes them, over one kept-alive
# connection (curl): N checks of rlc, N of B4 (examples/), and N slider runs
# of B1 and of B4 to t = 1, each with another value of a parameter (B1's
# pivot damping B: the prepared model runs again; B4's arm mass m1: a
# mechanism's parameter prepares the model again, through the stage cache).
# Prints the median, smallest and largest time of each, as curl sees it.
#
# Usage: bench/studio_round_trip.sh [N]   (from the source directory, after a build; N = 20)
set -eu
n=${1:-20}
build=${BUILD:-build}
out=$(mktemp)
"$build/paynter" studio examples >"$out" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -f "$out"' EXIT
for _ in 1 2 3 4 5 6 7 8 9 10; do grep -q token= "$out" && break; sleep 0.5; done
url=$(grep -o 'http://[^ ]*' "$out")
port=$(echo "$url" | sed 's/.*:\([0-9]*\)\/.*/\1/')
token=${url##*=}
base="http://127.0.0.1:$port/api"
# label, file, then a query per request (each ends with &)
series() {
  label=$1 file=$2
  shift 2
  set -- "$@"
  args=""
  first=1
  for q in "$@"; do
    [ $first = 1 ] || args="$args --next"
    first=0
    args="$args -s -o /dev/null -w %{time_total}\\n -H X-Paynter-Token:$token --data-binary @examples/$file $base/$q"
  done
  # shellcheck disable=SC2086
  curl $args | sort -n | awk -v label="$label" '{t[NR] = 1000 * $1} END {
    printf "%-36s median %6.1f ms, smallest %6.1f, largest %6.1f (%d requests)\n", label, t[int((NR + 1) / 2)], t[1], t[NR], NR}'
}
queries() {  # kind, file, parameter, count
  i=0
  while [ $i -lt "$4" ]; do
    case $1 in
      check) echo "check?path=$2" ;;
      run) echo "simulate?path=$2&t-end=1&param=$3%3D$(awk -v i=$i 'BEGIN {print 1 + 0.01 * i}')" ;;
    esac
    i=$((i + 1))
  done
}
series "check rlc" rlc.yaml $(queries check rlc.yaml "" "$n")
series "check B4_spatial_arm" B4_spatial_arm.yaml $(queries check B4_spatial_arm.yaml "" "$n")
series "slider run B1_pendulum (B)" B1_pendulum.yaml $(queries run B1_pendulum.yaml B "$n")
series "slider run B4_spatial_arm (m1)" B4_spatial_arm.yaml $(queries run B4_spatial_arm.yaml m1 "$n")
curl -s -d "" -H "X-Paynter-Token: $token" "$base/shutdown" >/dev/null
wait $pid 2>/dev/null || true
