# lib.sh - shared by the stream tests: a fresh directory, and everything started is
# killed on exit.  Needs HARNESS, PROBE, CAT, TESTS_DIR from meson's environment.
set -u
T=$(mktemp -d /tmp/mtrace-stream-test.XXXXXX)
PIDS=()
# Sanitizer builds: undefined behaviour stops the process, and any report in the
# output of anything this test ran fails the test.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
SIM_STARTED=
cleanup() {
	local rc=$? p
	[ -n "$SIM_STARTED" ] && "$SIMXEN" -d "$T/sim" stop >/dev/null 2>&1
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	sleep 0.1
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	if grep -l -E "runtime error:|ERROR: (Address|Leak|UndefinedBehavior)Sanitizer" \
		"$T"/*.err "$T"/*.log "$T"/*.sum "$T"/*.out 2>/dev/null; then
		echo "FAIL: sanitizer report in the files above" >&2
		grep -h -A20 -E "runtime error:|ERROR: (Address|Leak|UndefinedBehavior)Sanitizer" \
			"$T"/*.err "$T"/*.log "$T"/*.sum "$T"/*.out 2>/dev/null | head -60 >&2
		rc=1
	fi
	[ -n "${KEEP:-}" ] || rm -rf "$T"
	exit $rc
}
trap cleanup EXIT
SOCK=$T/mtraced.sock

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

# Start the harness with args; wait until it listens.
start_harness() {
	rm -f "$T/harness.err" "$SOCK"
	"$HARNESS" -s "$SOCK" "$@" >"$T/harness.json" 2>"$T/harness.err" &
	HPID=$!
	PIDS+=("$HPID")
	for _ in $(seq 100); do
		grep -q "listening on" "$T/harness.err" 2>/dev/null && return 0
		kill -0 "$HPID" 2>/dev/null || break
		sleep 0.05
	done
	cat "$T/harness.err" >&2
	fail "harness did not start"
}

# Wait for a pid with a limit in seconds; fails the test on timeout.
wait_for() {
	local pid=$1 limit=$2 i
	for i in $(seq $((limit * 20))); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid"; return $?; }
		sleep 0.05
	done
	fail "process $pid still running after ${limit}s"
}

# End to end: the simulated Xen, then mtraced on it (extra args: mtraced options).
start_e2e() {
	export MTRACE_SIM_DIR=$T/sim
	"$SIMXEN" -d "$T/sim" start >"$T/simxen.log" 2>&1 || fail "mtrace-simxen start: $(cat "$T/simxen.log")"
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

# A guest running mtrace-load: name domid summary-file mtrace-load-args...
start_guest() {
	local name=$1 domid=$2 sum=$3
	shift 3
	"$SIMXEN" -d "$T/sim" create --domid "$domid" --name "$name" --log "$T/$name.log" -- \
		"$LOAD" --wait-reader 10 --linger 10 --summary "$sum" "$@" >/dev/null ||
		fail "mtrace-simxen create $name"
}

# Wait until these summary files exist and only Domain-0 is left.
wait_guests() {
	local f i ok
	for i in $(seq 600); do
		ok=1
		for f in "$@"; do [ -s "$f" ] || ok=; done
		if [ -n "$ok" ] && [ "$("$SIMXEN" -d "$T/sim" list | wc -l)" -le 1 ]; then
			return 0
		fi
		sleep 0.1
	done
	"$SIMXEN" -d "$T/sim" list >&2
	fail "guests did not finish"
}
