#!/usr/bin/env bash
# modelDescription.xml of exported FMUs is valid against the FMI 2.0 XML
# schemas (tests/fmi2/schema, the standard's files, FMI 2.0.5): xmllint
# --schema on B1, B3, B4, the DC motor with units and an input, the RLC
# circuit, a model with a derived parameter (B1's JA), one exported for
# co-simulation alone and models with events (event indicators). Then a description broken on purpose must fail, so
# that the check itself is known to bite.
set -euo pipefail
exe=$1 src=$2
schema="$src/tests/fmi2/schema/fmi2ModelDescription.xsd"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
check() {  # name, model, options...
  local name=$1 model=$2
  shift 2
  "$exe" fmu "$src/examples/$model.yaml" -o "$name.fmu" "$@" > "$name.log"
  unzip -p "$name.fmu" modelDescription.xml > "$name.xml"
  xmllint --noout --schema "$schema" "$name.xml"
}
check b1 B1_pendulum
check b3 B3_quick_return
check b4 B4_spatial_arm
check dcu dc_motor_units
check rlc rlc
check msd_cs mass_spring_damper --kind cs
check fourbar fourbar --form state --constraints parasitic --kind me
# models with events: a state event with a reset, a sampled controller, switched elements
check ball bouncing_ball
check sampled dc_motor_sampled_control
check belt belt_friction
grep -q 'numberOfEventIndicators="1"' ball.xml
# The check bites: an unknown causality and a unit attribute on a variable of no type fail.
sed 's/causality="input"/causality="inlet"/' dcu.xml > broken1.xml
grep -q 'causality="inlet"' broken1.xml
if xmllint --noout --schema "$schema" broken1.xml 2> broken1.err; then
  echo "a description with causality=\"inlet\" passed the schema" >&2
  exit 1
fi
sed 's/<BaseUnit /<BaseUnit kilogram="1" /' dcu.xml > broken2.xml
grep -q 'kilogram="1"' broken2.xml
if xmllint --noout --schema "$schema" broken2.xml 2> broken2.err; then
  echo "a description with an unknown BaseUnit exponent passed the schema" >&2
  exit 1
fi
echo "7 model descriptions valid against fmi2ModelDescription.xsd; 2 broken ones rejected"
