#!/bin/bash
# bench/files: how fast mtrace-cat -i converts a recording to each format, how many
# bytes an event takes in each, and that the converters' memory does not grow with
# the length of the capture.
#   bench/files/run.sh BUILD [RUNS]
# 1. captures two recordings with the real chain on the simulated Xen: mtrace-load
#    (2 rings x 400 k events: the whole vocabulary, labels, counters, fails, evtchn) and
#    the 2014 MirageOS trace replayed 5 and 50 times (fresh thread ids each pass);
# 2. converts each to every format, RUNS times side by side (convert.py).
set -eu
B=$(readlink -f "${1:-build}")
RUNS=${2:-3}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d /tmp/mtrace-bench-files.XXXXXX)
SIM=$T/sim
export MTRACE_SIM_DIR=$SIM
pids=()
cleanup() {
	"$B/sim/mtrace-simxen" --dir "$SIM" stop >/dev/null 2>&1 || true
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$T"
}
trap cleanup EXIT
"$B/sim/mtrace-simxen" --dir "$SIM" start >/dev/null
"$B/daemon/mtraced" --foreground -c /dev/null --sim-dir "$SIM" -s "$T/sock" --set drop_privileges=false \
	>"$T/mtraced.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q ready "$T/mtraced.log" 2>/dev/null && break; sleep 0.1; done

capture() {	# file domid name prog args...
	local out=$1 domid=$2 name=$3
	shift 3
	"$B/client/cat/mtrace-cat" -s "$T/sock" -f proto -O "$out" &
	local cp=$!
	sleep 0.3
	"$B/sim/mtrace-simxen" --dir "$SIM" create --domid "$domid" --name "$name" -- "$@" >/dev/null
	# until the guest is gone, or (a --hold replay) the recording stops growing
	local last=-1 now
	while "$B/sim/mtrace-simxen" --dir "$SIM" list | grep -q "^$domid "; do
		sleep 1
		now=$(stat -c %s "$out")
		[ "$now" = "$last" ] && "$B/sim/mtrace-simxen" --dir "$SIM" destroy "$domid" >/dev/null
		last=$now
	done
	sleep 0.5
	kill -INT $cp
	wait $cp || true
}
capture "$T/load.mtr" 5 load "$B/guest/mtrace-load" --wait-reader 10 --linger 10 --rings 2 -p 256 \
	-n 400000 -R 200000 --summary /dev/null
capture "$T/replay5.mtr" 6 replay5 "$B/guest/replay/mtrace-replay" --speed 0 --passes 5 -p 512 --hold \
	"$SRC/data/mirage/log-x86.sexp"
capture "$T/replay50.mtr" 7 replay50 "$B/guest/replay/mtrace-replay" --speed 0 --passes 50 -p 512 --hold \
	"$SRC/data/mirage/log-x86.sexp"
uptime
for r in load replay5 replay50; do
	python3 "$SRC/bench/files/convert.py" "$B/client/cat/mtrace-cat" "$T/$r.mtr" "$RUNS"
	echo
done
