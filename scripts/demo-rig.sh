# demo-rig.sh - a simulated Xen host with mtraced and guests, for ./demo and tests/top.
# Sourced, not run.  The caller sets:
#   RIG_DIR      a fresh directory (everything lives there; removing it is the caller's job)
#   RIG_BUILD    the meson build directory holding the programs
# and gets RIG_SIM (simulated Xen state dir), RIG_SOCK (mtraced's socket) and:
#   rig_start             start the broker and mtraced, wait until mtraced listens
#   rig_guest NAME PROG…  create a domain running PROG (prints its domid)
#   rig_stop              stop mtraced and the broker (which kills every guest)
#   rig_pids              pids of every process still running for this rig

RIG_SIMXEN=$RIG_BUILD/sim/mtrace-simxen
RIG_MTRACED=$RIG_BUILD/daemon/mtraced
RIG_TOP=$RIG_BUILD/client/top/mtrace-top
RIG_REPLAY=$RIG_BUILD/guest/replay/mtrace-replay
RIG_LOAD=$RIG_BUILD/guest/mtrace-load
RIG_SIM=$RIG_DIR/xen
RIG_SOCK=$RIG_DIR/mtraced.sock
RIG_DAEMON=

rig_log_tail() {	# file: the end of a log, for a failure message
	[ -f "$1" ] && tail -n 20 "$1" | sed 's/^/    /' >&2
}

rig_start() {
	local i
	for i in "$RIG_SIMXEN" "$RIG_MTRACED"; do
		[ -x "$i" ] || { echo "rig: $i is not built" >&2; return 1; }
	done
	"$RIG_SIMXEN" -d "$RIG_SIM" start >"$RIG_DIR/simxen.out" 2>&1 || {
		echo "rig: the simulated Xen did not start:" >&2
		rig_log_tail "$RIG_DIR/simxen.out"
		return 1
	}
	# Its own session, so that stopping it reaches whatever it forks.
	setsid "$RIG_MTRACED" --backend sim --sim-dir "$RIG_SIM" -s "$RIG_SOCK" -f \
		-c /dev/null >"$RIG_DIR/mtraced.log" 2>&1 </dev/null &
	RIG_DAEMON=$!
	for i in $(seq 100); do
		[ -S "$RIG_SOCK" ] && return 0
		kill -0 "$RIG_DAEMON" 2>/dev/null || break
		sleep 0.1
	done
	echo "rig: mtraced did not come up:" >&2
	rig_log_tail "$RIG_DIR/mtraced.log"
	return 1
}

rig_guest() {	# NAME PROG ARGS...
	local name=$1
	shift
	"$RIG_SIMXEN" -d "$RIG_SIM" create --name "$name" --log "$RIG_DIR/guest-$name.log" -- "$@"
}

# Every process whose environment or command line names our directory: the broker,
# mtraced and the guests (they inherit MTRACE_SIM_DIR).
rig_pids() {
	# One grep over every process (a fork per process is slow on a busy machine); the
	# pattern comes from a file so that grep's own command line does not match.
	grep -lsF -f <(printf '%s\n' "$RIG_DIR") /proc/[0-9]*/cmdline /proc/[0-9]*/environ 2>/dev/null |
		sed -n 's|^/proc/\([0-9]*\)/.*|\1|p' | sort -u | grep -vx -- "$$"
}

rig_stop() {
	local i
	if [ -n "$RIG_DAEMON" ]; then
		kill -TERM -- "-$RIG_DAEMON" 2>/dev/null || kill -TERM "$RIG_DAEMON" 2>/dev/null
	fi
	[ -S "$RIG_SIM/sock" ] && "$RIG_SIMXEN" -d "$RIG_SIM" stop >/dev/null 2>&1
	for i in $(seq 50); do
		[ -z "$RIG_DAEMON" ] || ! kill -0 "$RIG_DAEMON" 2>/dev/null && break
		sleep 0.1
	done
	if [ -n "$RIG_DAEMON" ]; then
		kill -KILL -- "-$RIG_DAEMON" 2>/dev/null
		wait "$RIG_DAEMON" 2>/dev/null
	fi
	RIG_DAEMON=
	# Anything left (a broker that did not answer) goes by pid, never by name.
	for i in $(rig_pids); do
		kill -KILL "$i" 2>/dev/null
	done
}
