#!/bin/bash
# rss-idle.sh BUILD_DIR [GUESTS [PAGES]]: mtraced's memory with GUESTS idle guests (default
# 100, each 1 ring of PAGES data pages, default 16) on the simulated Xen.  Prints VmRSS
# and its parts: RssShmem is the mapped guest rings, RssAnon + RssFile the daemon itself
# (target: <= 64 MiB plus the mapped rings).
set -u
B=$(cd "${1:?usage: rss-idle.sh BUILD_DIR [GUESTS [PAGES]]}" && pwd)
N=${2:-100}
PAGES=${3:-16}
SIMXEN=$B/sim/mtrace-simxen
MTRACED=$B/daemon/mtraced
PROBE=$B/tests/daemon/mtraced-probe
GUEST=$B/tests/daemon/hostile-guest
T=$(mktemp -d)
DPID=
trap '[ -n "$DPID" ] && kill $DPID 2>/dev/null; "$SIMXEN" --dir "$T/sim" stop >/dev/null 2>&1; rm -rf "$T"' EXIT
mkdir -p "$T/sim"
"$SIMXEN" --dir "$T/sim" start >/dev/null || exit 1
"$MTRACED" --foreground -q --backend sim --sim-dir "$T/sim" -s "$T/sock" 2>"$T/log" &
DPID=$!
for _ in $(seq 50); do [ -S "$T/sock" ] && break; sleep 0.1; done
for i in $(seq 1 "$N"); do
	"$SIMXEN" --dir "$T/sim" create --name "idle$i" -- "$GUEST" --rings 1 --pages "$PAGES" count 100 \
		>/dev/null || exit 1
done
for _ in $(seq 300); do
	n=$("$PROBE" "$T/sock" stats | grep -c '^dom .* state=running')
	[ "$n" -ge "$N" ] && break
	sleep 0.2
done
sleep 2	# a few periodic drains and statistics rounds
"$PROBE" "$T/sock" stats >/dev/null
echo "rss-idle: $n of $N idle guests traced (1 ring x $PAGES pages each = $(( N * (PAGES + 1) * 4 )) KiB of rings)"
grep -E '^(VmRSS|RssAnon|RssFile|RssShmem|VmHWM)' "/proc/$DPID/status" | sed 's/^/  /'
anon=$(awk '/^RssAnon/ {print $2}' "/proc/$DPID/status")
file=$(awk '/^RssFile/ {print $2}' "/proc/$DPID/status")
echo "rss-idle: daemon's own memory (RssAnon + RssFile) $(( (anon + file) / 1024 )) MiB; target <= 64 MiB plus mapped rings"
