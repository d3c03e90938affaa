#!/usr/bin/env bash
# The main job: build if needed, simulate B1 (examples/B1_pendulum.yaml) over
# 10 s, write out/B1_pendulum.csv and plot it to out/B1_pendulum.png.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --program
mkdir -p out
./build/paynter simulate examples/B1_pendulum.yaml --t-end 10 --rtol 1e-8 --atol 1e-10 --dt-out 0.01 \
  --stats -o out/B1_pendulum.csv
./build/paynter plot out/B1_pendulum.csv gamma gammadot xG yG -o out/B1_pendulum.png --title "B1 pendulum"
echo "wrote out/B1_pendulum.csv and out/B1_pendulum.png"
