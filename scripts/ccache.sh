# Sourced by the build scripts (build.sh, sanitize.sh, fuzz.sh): when ccache is
# installed, compile through it, with the paths it keys on taken relative to
# this checkout, so that a fresh clone elsewhere (CI's) reuses what another
# clone compiled. Sets PAYNTER_LAUNCHER to CMake's launcher options (empty
# without ccache); a build directory configured before keeps its own.
PAYNTER_LAUNCHER=()
if command -v ccache >/dev/null 2>&1 && [ -z "${CCACHE_DISABLE:-}" ]; then
  export CCACHE_BASEDIR="$PWD"
  # Debug builds (sanitize.sh's -g1) would otherwise key on the build directory.
  export CCACHE_NOHASHDIR=1
  PAYNTER_LAUNCHER=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
