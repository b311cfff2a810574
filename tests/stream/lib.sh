# lib.sh - shared by the stream tests: a fresh directory, and everything started is
# killed on exit.  Needs HARNESS, PROBE, CAT, TESTS_DIR from meson's environment.
set -u
T=$(mktemp -d /tmp/mtrace-stream-test.XXXXXX)
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	sleep 0.1
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	[ -n "${KEEP:-}" ] || rm -rf "$T"
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
