# rig.sh - a simulated Xen host with mtraced and guests on it: the process layer of
# ./demo and of the test suites (tests/rig.sh adds a temporary directory, failure
# reports and clean-up at exit on top of it).  Sourced, not run.  The caller sets:
#   RIG_DIR      a fresh directory (everything lives there; removing it is the caller's job)
#   RIG_BUILD    the meson build directory holding the programs (or every RIG_<PROG>)
# and gets RIG_SIM (simulated Xen state dir), RIG_SOCK (mtraced's socket), RIG_LOG
# (mtraced's log, appended to across restarts), RIG_DAEMON (mtraced's pid) and:
#   rig_sim_start             start the simulated Xen (the broker)
#   rig_daemon_start [OPT…]   start mtraced on it (extra mtraced options), wait until ready
#   rig_daemon_stop           SIGTERM mtraced; returns its exit status
#   rig_start [OPT…]          both of the above
#   rig_guest NAME [CREATE-OPT…] -- PROG ARGS…
#                             create a domain running PROG (prints its domid); its
#                             output goes to $RIG_DIR/NAME.log
#   rig_stop                  stop mtraced and the broker (which kills every guest)
#   rig_pids                  pids of every process still running for this rig

RIG_SIMXEN=${RIG_SIMXEN:-$RIG_BUILD/sim/mtrace-simxen}
RIG_MTRACED=${RIG_MTRACED:-$RIG_BUILD/daemon/mtraced}
RIG_TOP=${RIG_TOP:-$RIG_BUILD/client/top/mtrace-top}
RIG_REPLAY=${RIG_REPLAY:-$RIG_BUILD/guest/replay/mtrace-replay}
RIG_LOAD=${RIG_LOAD:-$RIG_BUILD/guest/mtrace-load}
RIG_SIM=$RIG_DIR/sim
RIG_SOCK=$RIG_DIR/mtraced.sock
RIG_LOG=$RIG_DIR/mtraced.log
RIG_DAEMON=

rig_log_tail() {	# file: the end of a log, for a failure message
	[ -f "$1" ] && tail -n 20 "$1" | sed 's/^/    /' >&2
}

rig_sim_start() {
	[ -x "$RIG_SIMXEN" ] || { echo "rig: $RIG_SIMXEN is not built" >&2; return 1; }
	mkdir -p "$RIG_SIM"
	"$RIG_SIMXEN" --dir "$RIG_SIM" start >"$RIG_DIR/simxen.out" 2>&1 || {
		echo "rig: the simulated Xen did not start:" >&2
		rig_log_tail "$RIG_DIR/simxen.out"
		return 1
	}
}

# Ready is the daemon's own "ready:" line (logged once it listens and has looked at
# every guest), counted so that a restart waits for its own.
rig_daemon_start() {
	local i n0
	[ -x "$RIG_MTRACED" ] || { echo "rig: $RIG_MTRACED is not built" >&2; return 1; }
	rm -f "$RIG_SOCK"
	n0=$(grep -c 'main: ready: ' "$RIG_LOG" 2>/dev/null)
	# Its own session, so that stopping it reaches whatever it forks.
	setsid "$RIG_MTRACED" --foreground -c /dev/null --backend sim --sim-dir "$RIG_SIM" -s "$RIG_SOCK" \
		"$@" >>"$RIG_LOG" 2>&1 </dev/null &
	RIG_DAEMON=$!
	for i in $(seq 200); do
		[ -S "$RIG_SOCK" ] && [ "$(grep -c 'main: ready: ' "$RIG_LOG")" -gt "${n0:-0}" ] &&
			return 0
		kill -0 "$RIG_DAEMON" 2>/dev/null || break
		sleep 0.05
	done
	echo "rig: mtraced did not come up:" >&2
	rig_log_tail "$RIG_LOG"
	return 1
}

rig_daemon_stop() {
	local i rc
	[ -n "$RIG_DAEMON" ] || return 0
	kill -TERM "$RIG_DAEMON" 2>/dev/null
	for i in $(seq 100); do
		kill -0 "$RIG_DAEMON" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$RIG_DAEMON" 2>/dev/null; then
		echo "rig: mtraced did not stop on SIGTERM" >&2
		kill -KILL -- "-$RIG_DAEMON" 2>/dev/null
		wait "$RIG_DAEMON" 2>/dev/null
		RIG_DAEMON=
		return 124
	fi
	wait "$RIG_DAEMON"
	rc=$?
	RIG_DAEMON=
	return $rc
}

rig_start() {
	rig_sim_start && rig_daemon_start "$@"
}

rig_guest() {	# NAME [CREATE-OPTIONS...] -- PROG ARGS...
	local name=$1
	shift
	[ "${1:-}" = -- ] && shift
	case " $* " in
	*" -- "*) ;;
	*) set -- -- "$@" ;;
	esac
	"$RIG_SIMXEN" --dir "$RIG_SIM" create --name "$name" --log "$RIG_DIR/$name.log" "$@"
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
	[ -S "$RIG_SIM/sock" ] && "$RIG_SIMXEN" --dir "$RIG_SIM" stop >/dev/null 2>&1
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
