#!/usr/bin/env bash
# The screenshots of docs/report.md: B3's and B4's reports in headless Chromium.
# Usage: scripts/report_screenshots.sh [build dir]   (writes docs/img/*.png)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
shot() {  # page, fragment, png, height
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,"$4" \
    --virtual-time-budget=4000 --screenshot="$3" "file://$1$2" 2>/dev/null
}
"$build/paynter" report "$root/examples/B3_quick_return.yaml" --t-end 1 -o "$out/B3.html"
"$build/paynter" report "$root/examples/B4_spatial_arm.yaml" --t-end 2 -o "$out/B4.html"
mkdir -p "$root/docs/img"
shot "$out/B3.html" "#select=t7" "$root/docs/img/report_B3.png" 1100
shot "$out/B3.html" "#only=equations" "$root/docs/img/report_B3_equations.png" 900
shot "$out/B4.html" "" "$root/docs/img/report_B4.png" 1100
shot "$out/B4.html" "#only=view3d-sec&at=0.6&trace=b:slider" "$root/docs/img/report_B4_3d.png" 700
ls -la "$root"/docs/img/report_*.png
