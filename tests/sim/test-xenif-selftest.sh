#!/bin/bash
# The real-Xen area's seam checks (tests/xen/xenif-selftest.c), whose expectations were
# observed on real Xen, run against the simulation: dom0 loopback, then a domU/peer pair
# across domains.  The only place they run outside QEMU.
. "$MTRACE_SRC/tests/rig.sh"
sim_start
cd "$T" || exit 1
timeout 50 "$XENIF_SELFTEST" selftest sim >selftest.log 2>&1 || fail "selftest sim"
grep -q "XENTEST FAIL" selftest.log && fail "selftest sim reported a failure"
grep -q "XENTEST PASS" selftest.log || fail "selftest sim checked nothing"

domid=$(guest domu -- "$XENIF_SELFTEST" domu sim)
XENIF_DESTROY_CMD="'$SIMXEN' --dir '$SIM' destroy %u" \
	timeout 50 "$XENIF_SELFTEST" peer "$domid" sim >peer.log 2>&1 || fail "peer $domid"
grep -q "XENTEST FAIL" peer.log domu.log && fail "peer/domu reported a failure"
grep -q "XENTEST PASS" peer.log || fail "peer checked nothing"
echo "xenif-selftest on the simulation: $(grep -c 'XENTEST PASS' selftest.log peer.log | tr '\n' ' ')passes"
