# Helpers of the legacy tests that run the whole chain on the simulated Xen:
# mtrace-simxen, mtraced (sim backend), mtrace-cat -f json, a legacy guest.
# Sourced; expects SIMXEN MTRACED CAT set.  Everything lives in $dir and is killed on exit.
set -eu
dir=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	"$SIMXEN" -d "$dir/xen" stop >/dev/null 2>&1 || true
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*.log "$dir"/*.err; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }; done; exit 1; }

# start_chain POLL_MS: broker, daemon (legacy poll interval POLL_MS), a json client
start_chain() {
	mkdir "$dir/xen"
	"$SIMXEN" -d "$dir/xen" start >/dev/null || fail "mtrace-simxen start"
	"$MTRACED" --backend sim --sim-dir "$dir/xen" -s "$dir/mtraced.sock" -f \
		-o "mprof_poll_ms=$1" >"$dir/mtraced.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 100); do [ -S "$dir/mtraced.sock" ] && break; sleep 0.05; done
	[ -S "$dir/mtraced.sock" ] || fail "mtraced did not listen"
	"$CAT" -s "$dir/mtraced.sock" -f json --stats 200 >"$dir/cat.jsonl" 2>"$dir/cat.err" &
	pids+=($!)
	sleep 0.3
}

# wait_for CMD... : retry a check for up to 40 s
wait_for() {
	for _ in $(seq 200); do "$@" && return 0; sleep 0.2; done
	return 1
}
