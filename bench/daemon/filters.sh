#!/bin/bash
# filters.sh - what clients' subscriptions cost a busy guest (issue 13): N clients
# (default 31) with K label prefixes each (default 256), events, Stats every 100 ms
# with top 1000 and label statistics, while mtrace-load writes 150,000 events at
# 30,000/s into a 128-page ring; prints mtraced's CPU time over the run (user+system,
# less sensitive to the machine's load than wall time) and the events the guest lost
# in its ring (the daemon fell behind).  Run side by side with another build's mtraced
# for a before/after:
#
#   bench/daemon/filters.sh BUILD_DIR [MTRACED...]    (each MTRACED in turn, 3 runs)
set -u
B=$(readlink -f "$1")
shift
[ $# -eq 0 ] && set -- "$B/daemon/mtraced"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
N=${N:-31}
K=${K:-256}
for run in 1 2 3; do
	for D in "$@"; do
		T=$(mktemp -d)
		mkdir -p "$T/sim"
		"$B/sim/mtrace-simxen" --dir "$T/sim" start >/dev/null
		"$D" -f --backend sim --sim-dir "$T/sim" -s "$T/sock" --set log_level=err 2>/dev/null &
		DP=$!
		for _ in $(seq 100); do [ -S "$T/sock" ] && break; sleep 0.1; done
		python3 "$SRC/tests/reliab/hostile-client.py" filters "$T/sock" "$N" "$K" 14 >/dev/null &
		HC=$!
		sleep 2
		c0=$(awk '{print $14 + $15}' "/proc/$DP/stat")
		"$B/sim/mtrace-simxen" --dir "$T/sim" create --name ref --log "$T/ref.json" \
			--preserve-poweroff -- "$B/guest/mtrace-load" -n 150000 --rate 30000 -p 128 -N 64 --labels 8 \
			--wait-reader 10 --linger 5 >/dev/null
		sleep 9
		c1=$(awk '{print $14 + $15}' "/proc/$DP/stat")
		cpu_ms=$(( (c1 - c0) * 1000 / $(getconf CLK_TCK) ))
		lost=$("$B/tests/daemon/mtraced-probe" -s "$T/sock" stats | sed -n 's/^dom 1 .* lost=\([0-9]*\) .*/\1/p')
		ev=$("$B/tests/daemon/mtraced-probe" -s "$T/sock" stats | sed -n 's/^dom 1 .* events=\([0-9]*\) .*/\1/p')
		echo "run $run $D: $N clients x $K prefixes: guest events decoded $ev, lost in ring $lost, mtraced CPU $cpu_ms ms (load $(cut -d' ' -f1 /proc/loadavg))"
		kill "$HC" "$DP" 2>/dev/null
		wait "$HC" "$DP" 2>/dev/null
		"$B/sim/mtrace-simxen" --dir "$T/sim" stop >/dev/null
		rm -rf "$T"
	done
done
