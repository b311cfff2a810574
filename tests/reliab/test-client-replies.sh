#!/bin/bash
# What a client can make mtraced queue is bounded at its real cost (docs/man/mtraced.8,
# "MEMORY"): a client sending Pings without reading the Pongs, and twenty clients that
# subscribe to a busy guest and never read, leave mtraced's RSS within the documented
# bound, and a well-behaved client is still served.  Before: every Pong was its own
# >= 1 KiB libevent chain while the cap counted its 5 bytes (a Ping flood grew mtraced
# by gigabytes), and the per-client caps had no total beside them.
# RELIAB_OLD=1 leaves out the settings the daemon before the fix did not have;
# RELIAB_PARTS="pings" or "noread" runs one half.
. "$MTRACE_SRC/tests/rig.sh"
HC="$RELIAB_DIR/hostile-client.py"

# Under ASan freed memory waits in a quarantine and every block has redzones: keep the
# quarantine small and allow three times the heap (the unbounded daemon still passes
# any such bound within a second).
SLACK=1
if grep -q __asan_init "$MTRACED" 2>/dev/null; then
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4
	SLACK=3
fi

rss_kib() { sed -n 's/^VmRSS:[^0-9]*\([0-9]*\).*/\1/p' "/proc/$DPID/status"; }

# watch_rss LIMIT_KIB SECONDS PID: fail as soon as mtraced passes LIMIT (so that an
# unbounded daemon is stopped before it eats the machine); prints the peak
watch_rss() {
	local peak=0 r
	for _ in $(seq $(($2 * 20))); do
		r=$(rss_kib)
		[ "$r" -gt "$peak" ] && peak=$r
		if [ "$r" -gt "$1" ]; then
			kill -KILL "$3" 2>/dev/null
			echo "FAIL: mtraced RSS $r KiB passed the bound $1 KiB" >&2
			return 1
		fi
		kill -0 "$3" 2>/dev/null || break
		sleep 0.05
	done
	echo "$peak"
}

sim_start
# 2 MiB per client (+ 1 MiB of replies), 4 MiB of events for all clients together
NEW=(--set client_queue_total=4M --set max_clients_per_uid=32)
[ -n "${RELIAB_OLD:-}" ] && NEW=()
daemon_start --set client_queue_bytes=2M "${NEW[@]}"
base=$(rss_kib)
note "mtraced RSS at start: $base KiB"
PARTS=" ${RELIAB_PARTS:-pings noread} "

if [[ $PARTS == *" pings "* ]]; then
	# bound: 2 x (2 MiB + 1 MiB) for the one client; 16 MiB leaves room for the heap
	"$PYTHON" "$HC" pings "$SOCK" 20 >"$T/pings.out" &
	HP=$!
	PIDS+=("$HP")
	peak=$(watch_rss $((base + 16384 * SLACK)) 21 $HP) || exit 1
	wait "$HP"
	note "ping flood: $(cat "$T/pings.out"), peak RSS $peak KiB (+$((peak - base)))"
	grep -q "closed True" "$T/pings.out" || fail "the ping flood was not closed"
	alive
fi

if [[ $PARTS == *" noread "* ]]; then
	# bound: 2 x (4 MiB + 20 x 64 KiB fair shares) + 20 x 512 KiB of batches being built;
	# without the total, 20 x 2 MiB queued
	G=$(guest flood -- "$HOSTILE" --pages 64 flood)
	"$PYTHON" "$HC" noread "$SOCK" 20 4 >"$T/noread.out" &
	HN=$!
	PIDS+=("$HN")
	peak=$(watch_rss $((base + ${RELIAB_NOREAD_KIB:-24576} * SLACK)) 5 $HN) || exit 1
	wait "$HN"
	note "20 stalled clients: peak RSS $peak KiB (+$((peak - base)))"
	alive
	"$SIMXEN" --dir "$SIM" destroy "$G" >/dev/null
fi
snap
grep -q "^end clients=" "$T/stats" || fail "a new client got no statistics"
daemon_stop
