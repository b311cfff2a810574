#!/bin/sh
# run-sim.sh SIMXEN SIM-TEST CASE: one sim-test case against a fresh simulated Xen host
# in a fresh temporary directory; everything started here is stopped on exit.
set -u
SIMXEN=$(realpath "$1") TEST=$(realpath "$2") CASE=$3
dir=$(mktemp -d "${TMPDIR:-/tmp}/mtrace-sim-test.XXXXXX") || exit 1
host=$dir/host
cleanup() {
	"$SIMXEN" -d "$host" stop >/dev/null 2>&1
	pid=$(cat "$host/pid" 2>/dev/null) && kill -9 "$pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
"$SIMXEN" -d "$host" start >/dev/null || { cat "$host/broker.log" 2>/dev/null; exit 1; }
export SIMXEN MTRACE_SIM_DIR="$host"
cd "$dir" || exit 1
timeout 55 "$TEST" "$CASE"
rc=$?
"$SIMXEN" -d "$host" stop >/dev/null 2>&1
# Sanitizer builds: a report from the broker or a guest fails the case too.
if grep -l -E 'runtime error|Sanitizer' "$host/broker.log" "$dir"/*.log 2>/dev/null; then
	echo "sanitizer report above"
	rc=1
fi
if [ $rc -ne 0 ]; then
	echo "--- broker.log"; cat "$host/broker.log"
	for f in "$dir"/*.log; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done
fi
exit $rc
