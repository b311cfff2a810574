#!/bin/bash
# bench/daemon/syscalls.sh BUILD_DIR [ROW...] - mtraced's fixed cost per loop turn at low and
# moderate rates, by counts rather than timings: the system calls it makes per event read
# (`strace -c -f -p` over SECS seconds), epoll_wait per event (its loop turns), and the
# voluntary context switches per event (/proc/PID/status: each a sleep of the loop).
# Counts do not depend on how fast the machine is; a loaded machine only lowers them
# (more events wait for each turn).  strace slows each system call, so absolute times
# mean nothing here, counts do.
# A ROW is GUESTSxRATE[:noclient]: GUESTS guests of one ring each, RATE events/s each,
# one stream client subscribed to everything (stream-bench-client) unless :noclient.
# Default rows: 1x100 1x1000 1x10000 3x300 1x1000:noclient.
# Knobs: SECS (the strace window, default 5), MTRACED_OPTS.
set -u
B=$(cd "${1:?usage: syscalls.sh BUILD_DIR [GUESTSxRATE[:noclient]...]}" && pwd)
shift
ROWS=${*:-1x100 1x1000 1x10000 3x300 1x1000:noclient}
SECS=${SECS:-5}
SIMXEN=$B/sim/mtrace-simxen
MTRACED=$B/daemon/mtraced
LOAD=$B/guest/mtrace-load
CLIENT=$B/bench/stream/stream-bench-client
PROBE=$B/tests/daemon/mtraced-probe
T=$(mktemp -d /tmp/mtrace-syscalls.XXXXXX)
DPID=
CPID=
cleanup() {
	[ -n "$CPID" ] && kill "$CPID" 2>/dev/null
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null
	[ -d "$T/sim" ] && "$SIMXEN" --dir "$T/sim" stop >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
command -v strace >/dev/null || { echo "strace is needed (scripts/bootstrap installs it)"; exit 1; }

events() { "$PROBE" -s "$T/sock" stats | sed -n 's/^dom .* events=\([0-9]*\) .*/\1/p' | awk '{ s += $1 } END { print s + 0 }'; }
vcs() { sed -n 's/^voluntary_ctxt_switches:[^0-9]*//p' "/proc/$DPID/status"; }

row() {
	local spec=$1 ng rate client=1 i e0 e1 v0 v1 w0 w1
	ng=${spec%%x*}
	rate=${spec#*x}
	case $rate in *:noclient) client=0 rate=${rate%:noclient} ;; esac
	rm -rf "$T/sim" "$T/sock"
	export MTRACE_SIM_DIR=$T/sim
	"$SIMXEN" --dir "$T/sim" start >/dev/null || exit 1
	# shellcheck disable=SC2086
	"$MTRACED" --foreground -c /dev/null --sim-dir "$T/sim" -s "$T/sock" --set drop_privileges=false -q \
		${MTRACED_OPTS:-} &
	DPID=$!
	for _ in $(seq 200); do [ -S "$T/sock" ] && break; sleep 0.05; done
	if [ $client = 1 ]; then
		"$CLIENT" -s "$T/sock" -q -t $((SECS + 30)) >/dev/null &
		CPID=$!
	fi
	for ((i = 0; i < ng; i++)); do
		"$SIMXEN" --dir "$T/sim" create --name "g$i" -- "$LOAD" --rate "$rate" --duration $((SECS + 20)) \
			--summary /dev/null >/dev/null || exit 1
	done
	sleep 2 # attached, past the start-up's rescans
	# first a window without strace for the context switches (strace makes every
	# system call one), then the strace window
	v0=$(vcs) w0=$(events)
	sleep "$SECS"
	v1=$(vcs) w1=$(events)
	e0=$(events)
	timeout -s INT "$SECS" strace -c -f -o "$T/strace" -p "$DPID" 2>/dev/null
	e1=$(events)
	[ -n "$CPID" ] && kill "$CPID" 2>/dev/null && wait "$CPID" 2>/dev/null
	CPID=
	kill -TERM "$DPID"
	wait "$DPID" 2>/dev/null
	DPID=
	"$SIMXEN" --dir "$T/sim" stop >/dev/null 2>&1
	python3 - "$T/strace" "$spec" $((e1 - e0)) $((v1 - v0)) $((w1 - w0)) <<'EOF'
import sys
path, spec, ev, vcs, vev = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
calls = {}
for line in open(path):
    f = line.split()
    # "% time seconds usecs/call calls [errors] syscall"
    if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
        calls[f[-1]] = int(f[3])
total = sum(calls.values())
ev = max(ev, 1)
top = sorted(calls.items(), key=lambda kv: -kv[1])[:8]
print("ROW %-16s events %7d  syscalls/event %6.2f  epoll_wait/event %5.2f  "
      "voluntary switches/event %5.2f  top: %s"
      % (spec, ev, total / ev, calls.get("epoll_wait", 0) / ev, vcs / max(vev, 1),
         " ".join("%s %.2f" % (k, v / ev) for k, v in top)))
EOF
}

echo "== syscalls per event: $SECS s of strace -c -f -p mtraced per row; load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
for r in $ROWS; do row "$r"; done
echo "(load average at the end $(cut -d' ' -f1-3 /proc/loadavg); command: bench/daemon/syscalls.sh $B $ROWS)"
