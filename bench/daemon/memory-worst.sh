#!/bin/bash
# memory-worst.sh - mtraced's RSS under the worst clients we can build, against the
# bound of mtraced(8), MEMORY (issue 13), with the default settings: 64 clients (32
# root, 32 nobody: max_clients_per_uid is half), each with a filter of its own so
# that none shares another's batches, 60 of them subscribed to every event and never
# reading, 4 sending Pings without reading; two guests writing ~1 M events/s with
# strings.  Q = min(64 x (8 MiB + 1 MiB), 2 x 64 MiB + 64 x 1 MiB) = 192 MiB, held in at
# most 2 Q of heap.  Prints RSS every second and the peak.  Needs root (setpriv).
#
#   bench/daemon/memory-worst.sh BUILD_DIR [SECONDS]     (default 30)
#
# RINGS=N adds a guest with N rings of 50 k events/s each: every one of the 64 filters
# then builds a batch for every ring each turn, which is what client_batch_total holds
# (without it: 64 x N batches of 256 events and more).  BATCH_TOTAL=SIZE sets it (e.g. 4M,
# to see it hold in a run this machine can drive); mtraced's peak is printed at the end.
set -u
B=$(readlink -f "$1")
S=${2:-30}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
HC=$SRC/tests/reliab/hostile-client.py
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
T=$(mktemp -d)
chmod 0755 "$T"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; kill "$DP" 2>/dev/null; wait "$DP" 2>/dev/null; "$B/sim/mtrace-simxen" --dir "$T/sim" stop >/dev/null 2>&1; rm -rf "$T"' EXIT
mkdir -p "$T/sim"
"$B/sim/mtrace-simxen" --dir "$T/sim" start >/dev/null
"$B/daemon/mtraced" --foreground --backend sim --sim-dir "$T/sim" -s "$T/sock" --set log_level=info \
	${BATCH_TOTAL:+--set client_batch_total=$BATCH_TOTAL} 2>"$T/log" &
DP=$!
for _ in $(seq 100); do [ -S "$T/sock" ] && break; sleep 0.1; done
chmod 0666 "$T/sock"
rss() { sed -n 's/^VmRSS:[^0-9]*\([0-9]*\).*/\1/p' "/proc/$DP/status"; }
echo "# start: RSS $(rss) KiB (load $(cut -d' ' -f1-3 /proc/loadavg))"
"$B/sim/mtrace-simxen" --dir "$T/sim" create --name f1 -- "$B/tests/daemon/hostile-guest" --pages 256 flood >/dev/null
"$B/sim/mtrace-simxen" --dir "$T/sim" create --name f2 -- "$B/guest/mtrace-load" --duration 3600 -p 256 --labels 64 --counters 64 -N 4000 >/dev/null
if [ "${RINGS:-0}" -gt 0 ]; then
	"$B/sim/mtrace-simxen" --dir "$T/sim" create --name wide -- "$B/guest/mtrace-load" --duration 3600 \
		-r "$RINGS" -p 16 -R 50000 >/dev/null
fi
sleep 1
$PY "$HC" noread "$T/sock" 30 "$S" >"$T/noread-root.out" 2>&1 &
PIDS+=($!)
setpriv --reuid=65534 --regid=65534 --clear-groups $PY "$HC" noread "$T/sock" 30 "$S" >"$T/noread-root.out" 2>&1 &
PIDS+=($!)
for u in 0 0 65534 65534; do
	setpriv --reuid=$u --regid=$u --clear-groups $PY "$HC" pings "$T/sock" "$S" >/dev/null 2>&1 &
	PIDS+=($!)
done
peak=0
for i in $(seq "$S"); do
	r=$(rss)
	[ "$r" -gt "$peak" ] && peak=$r
	printf "%3d s  RSS %7d KiB  clients %s\n" "$i" "$r" \
		"$("$B/tests/daemon/mtraced-probe" -s "$T/sock" stats 2>/dev/null | sed -n 's/^end clients=//p')"
	sleep 1
done
tail -n 3 "$T"/noread-*.out
kill "$DP" 2>/dev/null
wait "$DP" 2>/dev/null
sed -n 's/^mtraced: info: [a-z_]*: event batches: /# mtraced: event batches (client_batch_total): /p' "$T/log"
echo "# peak RSS $peak KiB; bound 2 Q = 384 MiB = 393216 KiB of heap for clients (plus guests' tables and rings)"
