#!/bin/bash
# sim.sh BUILD [GUESTS [SECONDS [INTERVAL_MS]]] - mtraced's CPU for its hypervisor source
# on the simulated Xen (issue 38): GUESTS idle mtrace-load guests (2 tasks, 2 vCPUs each),
# mtraced once with the source off and once with it on (vcpu_interval_ms INTERVAL_MS,
# default 200), SECONDS each (default 20); prints mtraced's CPU time (utime + stime) both
# ways and the difference per vCPU sample (one sample is one vCPU's interval).
# Run on a quiet machine (bench/README.md).
set -eu
BUILD=$(cd "${1:?BUILD}" && pwd)
GUESTS=${2:-10} SECS=${3:-20} IV=${4:-200}
T=$(mktemp -d)
export MTRACE_SIM_DIR=$T/sim
cleanup() {
	"$BUILD/sim/mtrace-simxen" stop >/dev/null 2>&1 || true
	rm -rf "$T"
}
trap cleanup EXIT
"$BUILD/sim/mtrace-simxen" start >"$T/sim.log" 2>&1 &
for _ in $(seq 50); do [ -S "$T/sim/sock" ] && break; sleep 0.1; done
for i in $(seq "$GUESTS"); do
	"$BUILD/sim/mtrace-simxen" create --name "g$i" -- "$BUILD/guest/mtrace-load" \
		--rate 10 --duration 100000 >/dev/null 2>&1
done
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
run() {	# OPTIONS...: mtraced's CPU ticks over SECS
	"$BUILD/daemon/mtraced" --foreground -s "$T/sock" "$@" >"$T/d.log" 2>&1 &
	local pid=$! a b
	sleep 2
	a=$(cpu_ticks "$pid")
	sleep "$SECS"
	b=$(cpu_ticks "$pid")
	kill -TERM "$pid"
	wait "$pid" || true
	echo $((b - a))
}
HZ=$(getconf CLK_TCK)
off=$(run)
on=$(run --vcpu-source --set "vcpu_interval_ms=$IV")
samples=$((GUESTS * 2 * SECS * 1000 / IV))
awk -v off="$off" -v on="$on" -v hz="$HZ" -v n="$samples" -v s="$SECS" -v g="$GUESTS" -v iv="$IV" 'BEGIN {
	printf "mtraced, %d idle guests, %d s: source off %.3f s CPU, on (every %d ms) %.3f s CPU\n", g, s, off / hz, iv, on / hz
	printf "  the source: %.1f us of CPU per vCPU sample (%d samples), %.2f %% of a CPU\n", (on - off) / hz / n * 1e6, n, (on - off) / hz / s * 100
}'
