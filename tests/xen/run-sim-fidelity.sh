#!/bin/bash
# run-sim-fidelity.sh - hold the simulated Xen to what this suite measured on real Xen:
# the same xenif-selftest checks (evtchn masking and the event raised by
# bind_interdomain, errno values, xenstore watch/transaction semantics, a destroyed
# domain staying "dying" while dom0 maps its pages, @releaseDomain) run against
# mtrace-simxen.  usage: run-sim-fidelity.sh SIMXEN XENIF_SELFTEST
set -u
SIMXEN=${1:?mtrace-simxen}
SELFTEST=${2:?xenif-selftest}
export MTRACE_SIM_DIR=$(mktemp -d "${TMPDIR:-/tmp}/mtrace-xen-sim.XXXXXX")
cleanup() {
	timeout 10 "$SIMXEN" stop >/dev/null 2>&1
	rm -rf "$MTRACE_SIM_DIR"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

timeout 10 "$SIMXEN" start >/dev/null || { echo "FAIL: mtrace-simxen start"; exit 1; }
rc=0
timeout 60 "$SELFTEST" selftest sim || rc=1
dom=$(timeout 10 "$SIMXEN" create --name peer -- "$SELFTEST" domu sim) ||
	{ echo "FAIL: create the peer domain"; exit 1; }
XENIF_DESTROY_CMD="$SIMXEN destroy %u" timeout 60 "$SELFTEST" peer "$dom" sim || rc=1
[ $rc = 0 ] && echo "PASS: the simulation behaves as real Xen did in every xenif-selftest check"
exit $rc
