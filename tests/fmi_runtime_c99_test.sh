#!/usr/bin/env bash
# The C every exported FMU is built from (sources/: the runtime of
# src/fmi/runtime, embedded into paynter, and the model's generated files)
# compiles as strict C99 with every warning an error: -std=c99 -pedantic
# -Wall -Wextra -Werror: FMUs of FMI 2.0 (the core pn_core.c with fmu.c) and of
# FMI 3.0 (the same core with fmu3.c: B1 and the bouncing ball). Models without events (B1), with an implicit block
# (B4 in joint coordinates), and with events of every kind: a state event with
# a reset (the bouncing ball), a sampled controller (time events), friction
# (switched elements). Then a warning planted on purpose must fail, so that
# the check itself is known to bite.
set -euo pipefail
exe=$1 src=$2 cc=${3:-cc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
flags=(-std=c99 -pedantic -Wall -Wextra -Werror -fPIC)
check() {  # name, model, options...
  local name=$1 model=$2
  shift 2
  "$exe" fmu "$src/examples/$model.yaml" -o "$name.fmu" "$@" > "$name.log"
  mkdir "$name"
  (cd "$name" && unzip -q "../$name.fmu")
  # The runtime, model.c and the programs' units (written by the native
  # backend's C writer, src/codegen, with the parameters a function does not
  # read marked unused), all with every warning.
  local api=fmu
  if [ -f "$name/sources/fmu3.c" ]; then api=fmu3; fi
  for f in "$name"/sources/{$api,pn_core,model,rhs,outputs,parameters,events}.c; do
    "$cc" "${flags[@]}" -c "$f" -o "$f.o"
  done
  [ "$(ls "$name"/sources/*.c | wc -l)" = 7 ]
  "$cc" -shared -o "$name/$name.so" "$name"/sources/*.o -lm
  # the runtime's files in the FMU are the ones in paynter's sources
  local header=paynter_fmi2.h
  if [ $api = fmu3 ]; then header=paynter_fmi3.h; fi
  for f in $api.c $header pn_core.c pn_core.h fmu_model.h; do
    cmp "$name/sources/$f" "$src/src/fmi/runtime/$f"
  done
  cmp "$name/sources/pn_illinois.h" "$src/src/solvers/pn_illinois.h"
}
check b1 B1_pendulum
check b4 B4_spatial_arm
check ball bouncing_ball
check sampled dc_motor_sampled_control
check belt belt_friction --kind cs
# FMI 3.0: the same core under fmu3.c, without events and with them
check b1_fmi3 B1_pendulum --fmi-version 3
check ball_fmi3 bouncing_ball --fmi-version 3
# The check bites: an unused variable in the runtime is an error.
sed 's|^static int pn_sign(double v) {|static int pn_sign(double v) {\n  int unused;|' ball/sources/pn_core.c > ball/sources/broken.c
grep -q 'int unused;' ball/sources/broken.c
if "$cc" "${flags[@]}" -c ball/sources/broken.c -o broken.o -I ball/sources 2> broken.err; then
  echo "an unused variable in the runtime passed -Werror" >&2
  exit 1
fi
# and so is a parameter left unused in a program's unit: the (void) marks are
# what keeps -Wunused-parameter quiet there.
grep -q '^  (void)w;$' b1/sources/rhs.c
sed '0,/^  (void)w;$/{/^  (void)w;$/d}' b1/sources/rhs.c > b1/sources/unmarked.c
if "$cc" "${flags[@]}" -c b1/sources/unmarked.c -o unmarked.o -I b1/sources 2> unmarked.err; then
  echo "an unused parameter in a program's unit passed -Werror" >&2
  exit 1
fi
echo "fmi_runtime_c99: the sources of 7 FMUs (5 FMI 2.0, 2 FMI 3.0) compile with ${flags[*]} ($("$cc" --version | head -1))"
