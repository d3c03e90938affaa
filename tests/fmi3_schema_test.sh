#!/usr/bin/env bash
# The modelDescription.xml of FMUs exported with --fmi-version 3 is valid
# against the FMI 3.0 XML schemas (tests/fmi3/schema, the standard's files,
# FMI 3.0.2), and their sources/buildDescription.xml against
# fmi3BuildDescription.xsd: xmllint --schema on B1, B4 (a mechanism in joint
# coordinates), the DC motor with units and an input, one exported for
# co-simulation alone, one for model exchange alone, and models with events
# (event indicators, as variables), and array outputs (outputs that form a
# vector by their names: B4's joint force, the fourbar's planar velocities and
# forces, the rigid body's angular velocity). Then descriptions
# broken on purpose must fail, so that the check itself is known to bite.
set -euo pipefail
exe=$1 src=$2
schema="$src/tests/fmi3/schema/fmi3ModelDescription.xsd"
build_schema="$src/tests/fmi3/schema/fmi3BuildDescription.xsd"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
n=0
check() {  # name, model, options...
  local name=$1 model=$2
  shift 2
  "$exe" fmu "$src/examples/$model.yaml" --fmi-version 3 -o "$name.fmu" "$@" > "$name.log"
  unzip -p "$name.fmu" modelDescription.xml > "$name.xml"
  unzip -p "$name.fmu" sources/buildDescription.xml > "$name.build.xml"
  xmllint --noout --schema "$schema" "$name.xml"
  xmllint --noout --schema "$build_schema" "$name.build.xml"
  n=$((n + 1))
}
check b1 B1_pendulum
check b4 B4_spatial_arm
check dcu dc_motor_units
check msd_cs mass_spring_damper --kind cs
check fourbar fourbar --form state --constraints parasitic --kind me
# models with events: a state event with a reset, a sampled controller (time events, conditions)
check ball bouncing_ball
check sampled dc_motor_sampled_control
grep -q 'fmiVersion="3.0"' ball.xml
[ "$(grep -c '<EventIndicator ' ball.xml)" = 1 ]
grep -q 'reinit="true"' ball.xml
# array outputs: FJ3 (FJ3x, FJ3y, FJ3z); crank_v, coupler_v, rocker_v, FO, FD (x and y); w (wx, wy, wz)
check body rigid_body_vector
[ "$(grep -c '<Dimension start="3"/>' b4.xml)" = 1 ]
[ "$(grep -c '<Dimension start="2"/>' fourbar.xml)" = 5 ]
grep -q '<Float64 name="w" valueReference="[0-9]*" description="output: the vector (wx, wy, wz)' body.xml
if grep -q 'name="wy"' body.xml; then
  echo "the component wy of the array w is a variable of its own" >&2
  exit 1
fi
# The check bites: an unknown causality, a unit attribute of no unit, an FMI 2.0 element, a build
# description without its configuration's model identifier fail.
bites() {  # file, sed expression, what
  sed "$2" "$1" > broken.xml
  if cmp -s "$1" broken.xml; then
    echo "the edit '$2' changed nothing" >&2
    exit 1
  fi
  if xmllint --noout --schema "$4" broken.xml 2> broken.err; then
    echo "a description with $3 passed the schema" >&2
    exit 1
  fi
}
bites dcu.xml 's/causality="input"/causality="inlet"/' 'causality="inlet"' "$schema"
bites dcu.xml 's/<BaseUnit /<BaseUnit kilogram="1" /' 'an unknown BaseUnit exponent' "$schema"
bites b1.xml 's/<Float64 name="B"/<ScalarVariable name="B"/; s/<ScalarVariable\(.*\)\/>/<ScalarVariable\1><\/ScalarVariable>/' \
  'an FMI 2.0 ScalarVariable' "$schema"
bites b1.build.xml 's/ modelIdentifier="[^"]*"//' 'no modelIdentifier' "$build_schema"
echo "$n model and build descriptions valid against fmi3ModelDescription.xsd and fmi3BuildDescription.xsd;" \
  "4 broken ones rejected"
