#!/bin/bash
# One sim-test case (the argument) against a fresh simulated Xen host; everything
# started here is stopped on exit, and a sanitizer report from the broker or a guest
# fails the case too (tests/rig.sh).
. "$MTRACE_SRC/tests/rig.sh"
sim_start
export SIMXEN
cd "$T" || exit 1
timeout 55 "$SIM_TEST" "$1" || fail "sim-test $1"
