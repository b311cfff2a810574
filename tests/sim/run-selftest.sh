#!/bin/sh
# run-selftest.sh SIMXEN XENIF-SELFTEST: the real-Xen area's seam checks
# (tests/xen/xenif-selftest.c), whose expectations were observed on real Xen, run
# against the simulation: dom0 loopback, then a domU/peer pair across domains.
set -u
SIMXEN=$(realpath "$1") SELFTEST=$(realpath "$2")
dir=$(mktemp -d "${TMPDIR:-/tmp}/mtrace-sim-selftest.XXXXXX") || exit 1
host=$dir/host
cleanup() {
	"$SIMXEN" -d "$host" stop >/dev/null 2>&1
	pid=$(cat "$host/pid" 2>/dev/null) && kill -9 "$pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() { echo "FAIL: $*"; cat "$host/broker.log" "$dir"/*.log 2>/dev/null; exit 1; }

"$SIMXEN" -d "$host" start >/dev/null || fail "broker start"
export MTRACE_SIM_DIR="$host"
cd "$dir" || exit 1
timeout 50 "$SELFTEST" selftest sim >selftest.log 2>&1 || fail "selftest sim"
grep -q "XENTEST FAIL" selftest.log && fail "selftest sim reported a failure"
grep -q "XENTEST PASS" selftest.log || fail "selftest sim checked nothing"

domid=$("$SIMXEN" -d "$host" create --name domu --log "$dir/domu.log" -- \
	"$SELFTEST" domu sim) || fail "create domu"
XENIF_DESTROY_CMD="'$SIMXEN' -d '$host' destroy %u" \
	timeout 50 "$SELFTEST" peer "$domid" sim >peer.log 2>&1 || fail "peer $domid"
grep -q "XENTEST FAIL" peer.log domu.log && fail "peer/domu reported a failure"
grep -q "XENTEST PASS" peer.log || fail "peer checked nothing"
"$SIMXEN" -d "$host" stop >/dev/null 2>&1
if grep -l -E 'runtime error|Sanitizer' "$host/broker.log" "$dir"/*.log 2>/dev/null; then
	fail "sanitizer report"
fi
echo "xenif-selftest on the simulation: $(grep -c 'XENTEST PASS' selftest.log peer.log | tr '\n' ' ')passes"
