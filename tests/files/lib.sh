# lib.sh - shared by the files tests: a fresh directory, the simulated Xen and mtraced,
# and everything started is killed on exit.  Needs CAT, TESTS_DIR (and for the chain
# MTRACED, SIMXEN) from meson's environment.
set -u
T=$(mktemp -d /tmp/mtrace-files-test.XXXXXX)
PIDS=()
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
SIM_STARTED=
cleanup() {
	local rc=$? p
	[ -n "$SIM_STARTED" ] && "$SIMXEN" -d "$T/sim" stop >/dev/null 2>&1
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	sleep 0.1
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	if grep -l -E "runtime error:|ERROR: (Address|Leak|UndefinedBehavior)Sanitizer" \
		"$T"/*.err "$T"/*.log 2>/dev/null; then
		echo "FAIL: sanitizer report in the files above" >&2
		grep -h -A20 -E "runtime error:|ERROR: (Address|Leak|UndefinedBehavior)Sanitizer" \
			"$T"/*.err "$T"/*.log 2>/dev/null | head -60 >&2
		rc=1
	fi
	[ -n "${KEEP:-}" ] && echo "kept $T" >&2 || rm -rf "$T"
	exit $rc
}
trap cleanup EXIT
SOCK=$T/mtraced.sock

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

# python3 with babeltrace2's bindings (python3-bt2 is Debian's, for /usr/bin/python3)
bt2_python() {
	local p
	for p in python3 /usr/bin/python3; do
		"$p" -c 'import bt2' 2>/dev/null && { echo "$p"; return 0; }
	done
	return 1
}

wait_for() {	# pid seconds
	local pid=$1 limit=$2 i
	for i in $(seq $((limit * 20))); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid"; return $?; }
		sleep 0.05
	done
	fail "process $pid still running after ${limit}s"
}

start_e2e() {	# mtraced options...
	export MTRACE_SIM_DIR=$T/sim
	"$SIMXEN" -d "$T/sim" start >"$T/simxen.log" 2>&1 || fail "mtrace-simxen start"
	SIM_STARTED=1
	"$MTRACED" -f -c /dev/null --sim-dir "$T/sim" -s "$SOCK" -o drop_privileges=false "$@" \
		>"$T/mtraced.log" 2>&1 &
	DPID=$!
	PIDS+=("$DPID")
	for _ in $(seq 200); do
		[ -S "$SOCK" ] && grep -q "ready" "$T/mtraced.log" && return 0
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.05
	done
	cat "$T/mtraced.log" >&2
	fail "mtraced did not start"
}

# Until only Domain-0 is left.
wait_guests() {
	for _ in $(seq 600); do
		[ "$("$SIMXEN" -d "$T/sim" list | wc -l)" -le 1 ] && return 0
		sleep 0.1
	done
	"$SIMXEN" -d "$T/sim" list >&2
	fail "guests did not finish"
}
