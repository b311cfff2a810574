#!/bin/bash
# Fuzz volume as a number (issue 13), on demand, not in CI: each target runs a given
# number of inputs and prints the counts it reached and the time it took.
#
#   bench/fuzz/run.sh BUILD_DIR [RING_INPUTS [CLIENT_STREAMS [LEGACY_MUTATIONS [LIVE_CONNS
#                               [ANNOUNCE_MUTATIONS]]]]]
#
# defaults: 5 x 10^7 ring mutations (10^8 inputs), 10^7 client streams (each of 1-4 frames), 10^5
# mutations of each legacy corpus file, 10^5 live connections, 10^6 mutations of each
# announcement corpus file.  Use an ASan+UBSan
# build (-Db_sanitize=address,undefined) to catch what does not crash outright.
#   ring     tests/ring/fuzz-decoder-replay: the ring decoder (private buffer and mapped
#            ring), RING mutations of each seed (2 seeds: 2 x RING inputs)
#   legacy   tests/legacy/fuzz-mprof-replay: the mirage-profile (legacy) parser
#   announce tests/daemon/fuzz-announce-replay: the announcement parser (daemon/announce.c)
#   client   bench/fuzz/fuzz-volume-client: frame split, ClientMsg, Subscribe checks,
#            copy and label filters (daemon/stream-request.c, label-filter.c)
#   live     bench/fuzz/proto-fuzz against a real mtraced on the simulated Xen, with
#            a guest running, checked for health every 2,000 connections
# A target that crashes or hangs (timeout) makes the script fail.
set -u
B=$(readlink -f "${1:?usage: run.sh BUILD_DIR [RING [CLIENT [LEGACY [LIVE]]]]}")
RING=${2:-50000000}
CLIENT=${3:-10000000}
LEGACY=${4:-100000}
LIVE=${5:-100000}
ANNOUNCE=${6:-1000000}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
rc=0

run() {	# name timeout-seconds command...
	local name=$1 t=$2 s e st
	shift 2
	echo "== $name: $*"
	s=$(date +%s)
	timeout "$t" "$@"
	st=$?
	e=$(date +%s)
	echo "== $name: exit $st after $((e - s)) s (load: $(cut -d' ' -f1-3 /proc/loadavg))"
	[ $st -eq 0 ] || rc=1
}

run ring 36000 "$B/tests/ring/fuzz-decoder-replay" -m "$RING"
run legacy 36000 "$B/tests/legacy/fuzz-mprof-replay" -m "$LEGACY" "$SRC/tests/legacy/fuzz-corpus"
if [ -x "$B/tests/daemon/fuzz-announce-replay" ]; then
	# house-daemon's target (tests/daemon/fuzz-announce.c): mutations of each corpus file
	run announce 36000 "$B/tests/daemon/fuzz-announce-replay" -m "$ANNOUNCE" \
		"$SRC/tests/daemon/announce-corpus"
else
	echo "== announce: no announcement parser target in this build"
fi
run client 36000 "$B/bench/fuzz/fuzz-volume-client" -n "$CLIENT"

# live: a real mtraced, a guest writing events, proto-fuzz against the socket
T=$(mktemp -d)
trap '[ -n "${DPID:-}" ] && kill "$DPID" 2>/dev/null; "$B/sim/mtrace-simxen" --dir "$T/sim" stop >/dev/null 2>&1; rm -rf "$T"' EXIT
mkdir -p "$T/sim"
"$B/sim/mtrace-simxen" --dir "$T/sim" start >/dev/null || exit 1
"$B/daemon/mtraced" --foreground --backend sim --sim-dir "$T/sim" -s "$T/sock" --set log_level=err 2>"$T/mtraced.log" &
DPID=$!
for _ in $(seq 100); do [ -S "$T/sock" ] && break; sleep 0.1; done
"$B/sim/mtrace-simxen" --dir "$T/sim" create --name fuzzed -- "$B/guest/mtrace-load" --duration 36000 --rate 20000 --labels 8 >/dev/null
run live 36000 "$B/bench/fuzz/proto-fuzz" -S "$T/sock" -n "$LIVE" -p "$DPID"
kill -0 "$DPID" 2>/dev/null || { echo "== live: mtraced died"; rc=1; }
grep -E "Sanitizer|runtime error" "$T/mtraced.log" && rc=1
exit $rc
