# rig.sh - the one shell rig of the test suites, sourced first by every tests/*/test-*.sh.
#
# It gives the test a fresh directory $T and, on top of scripts/rig.sh (the simulated
# Xen, mtraced and guests, shared with ./demo), what every suite needs: waits with a
# deadline, failure messages with the logs that explain them, and at exit (pass, fail
# or signal) every process it started stopped, any sanitizer report in the test's files
# turned into a failure, and $T removed (kept with KEEP=1).
#
# Programs and paths come from the environment tests/meson.build sets: MTRACE_SRC,
# MTRACE_BUILD_ROOT, SIMXEN, MTRACED, CAT, TOP, LOAD, REPLAY, MPROF_GUEST, and per
# suite what else it runs (MTRACED_PROBE, HOSTILE, HARNESS, PROBE, MESON, ...).
#
#   T SIM SOCK DLOG DPID  the directory, the simulated Xen's state, mtraced's socket,
#                         log (appended to across restarts) and pid
#   HERE                  the directory of the test script (its helpers live there)
#   PIDS                  pids to stop at exit: `cmd & PIDS+=($!)`
#   test_cleanup          if the test defines it, called first at exit
#
#   fail MSG / pass MSG / note MSG      FAIL: to stderr and exit 1 / ok: / # [Ns] progress
#   sim_start                           the simulated Xen ($SIM; exports MTRACE_SIM_DIR)
#   daemon_start [MTRACED-OPTION...]    mtraced on it; returns once it is ready
#   daemon_stop                         SIGTERM; fails unless it exits 0 within 10 s
#   guest NAME [CREATE-OPTION...] -- PROG ARGS...   a domain (prints its domid); its
#                                       output in $T/NAME.log
#   wait_until SECONDS CMD...           retry CMD every 0.1 s until it succeeds
#   wait_pid PID SECONDS                wait for PID to exit (its status), fail past SECONDS
#   snap / field / wait_field / wait_match / json_events / grant_maps / alive
#                                       mtraced's statistics as MTRACED_PROBE prints them
#   install_destdir                     `meson install` of the build into $D
set -u
: "${MTRACE_SRC:?}" "${MTRACE_BUILD_ROOT:?}"

T=$(mktemp -d "${TMPDIR:-/tmp}/mtrace-test.XXXXXX") || exit 1
HERE=$(cd "$(dirname "$0")" && pwd)
RIG_DIR=$T
RIG_BUILD=$MTRACE_BUILD_ROOT
RIG_SIMXEN=${SIMXEN:-}
RIG_MTRACED=${MTRACED:-}
RIG_TOP=${TOP:-}
RIG_REPLAY=${REPLAY:-}
RIG_LOAD=${LOAD:-}
. "$MTRACE_SRC/scripts/rig.sh"
SIM=$RIG_SIM
SOCK=$RIG_SOCK
DLOG=$RIG_LOG
DPID=
PIDS=()
D=$T/dest

# The system's python (a version manager's shim on PATH can take seconds to start).
PYTHON=python3
[ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3

SANITIZER_REPORT='runtime error:|(ERROR|WARNING): [A-Za-z]*Sanitizer'

rig_test_exit() {
	local rc=$? p f
	trap - EXIT
	type test_cleanup >/dev/null 2>&1 && test_cleanup
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	[ ${#PIDS[@]} -gt 0 ] && sleep 0.1
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	rig_stop
	# Guests run under the broker, so their exit status is nobody's: in a sanitizer
	# build, read what every program said instead.
	for f in "$T"/*.log "$T"/*.err "$T"/*.out "$T"/*.sum "$SIM/broker.log"; do
		if [ -f "$f" ] && grep -qE "$SANITIZER_REPORT" "$f"; then
			echo "FAIL: sanitizer report in $f:" >&2
			grep -E -A20 "$SANITIZER_REPORT" "$f" | head -n 40 >&2
			rc=1
		fi
	done
	if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
		for f in "$DLOG" "$SIM/broker.log" "$T"/*.log "$T"/*.err; do
			[ -s "$f" ] || continue
			[ "$f" = "$DLOG" ] && [ -n "${shown_dlog:-}" ] && continue
			[ "$f" = "$DLOG" ] && shown_dlog=1
			echo "--- $f (the end)" >&2
			tail -n "$([ "$f" = "$DLOG" ] && echo 60 || echo 15)" "$f" >&2
		done
	fi
	[ -n "${KEEP:-}" ] && echo "kept $T" >&2 || rm -rf "$T"
	exit $rc
}
trap rig_test_exit EXIT
trap 'exit 143' TERM INT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

pass() {
	echo "ok: $*"
}

note() {
	echo "# [${SECONDS}s] $*"
}

sim_start() {
	rig_sim_start || fail "mtrace-simxen start"
	export MTRACE_SIM_DIR=$SIM
}

daemon_start() {	# [mtraced options...]
	rig_daemon_start "$@" || fail "mtraced did not come up"
	DPID=$RIG_DAEMON
}

daemon_stop() {
	local rc
	rig_daemon_stop
	rc=$?
	DPID=
	[ $rc -eq 0 ] || fail "mtraced exited with status $rc"
}

guest() {	# NAME [create options] -- PROG ARGS...: prints the domid
	rig_guest "$@" || fail "create $1"
}

wait_until() {	# SECONDS CMD...
	local n=$(($1 * 10))
	shift
	for _ in $(seq "$n"); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

wait_pid() {	# PID SECONDS: its exit status; fails the test past SECONDS
	local pid=$1 limit=$2
	for _ in $(seq $((limit * 20))); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid"; return $?; }
		sleep 0.05
	done
	fail "process $pid still running after ${limit}s"
}

# json_events NAME: the total "events" of the JSON summary a guest printed, once the
# summary is complete (ends with a brace); the total is the first "events" key.
json_events() {
	local v
	for _ in $(seq 300); do
		if [ -s "$T/$1.log" ] && tail -c 3 "$T/$1.log" | grep -q '}'; then
			v=$(grep -o '"events": *[0-9]*' "$T/$1.log" | head -1 | grep -o '[0-9]*$')
			[ -n "$v" ] && { echo "$v"; return 0; }
		fi
		sleep 0.1
	done
	fail "guest $1 printed no summary"
}

# snap: one Stats into $T/stats
snap() {
	"$MTRACED_PROBE" -s "$SOCK" stats >"$T/stats" 2>>"$T/probe.err" ||
		fail "no statistics from mtraced"
}

# field DOMID KEY: from the last snap (state= is the rest of the line)
field() {
	if [ "$2" = state ]; then
		sed -n "s/^dom $1 .* state=\\(.*\\)\$/\\1/p" "$T/stats"
	else
		sed -n "s/^dom $1 .* $2=\\([^ ]*\\) .*/\\1/p" "$T/stats"
	fi
}

# wait_field DOMID KEY VALUE [SECONDS]: until the daemon reports it
wait_field() {
	local n=$(( ${4:-10} * 10 ))
	for _ in $(seq $n); do
		snap
		[ "$(field "$1" "$2")" = "$3" ] && return 0
		sleep 0.1
	done
	fail "domain $1: $2 is '$(field "$1" "$2")', expected '$3'"
}

# wait_match DOMID KEY REGEX [SECONDS]
wait_match() {
	local n=$(( ${4:-10} * 10 ))
	for _ in $(seq $n); do
		snap
		field "$1" "$2" | grep -Eq -- "$3" && return 0
		sleep 0.1
	done
	fail "domain $1: $2 is '$(field "$1" "$2")', expected /$3/"
}

# wait_clients N [SECONDS]: until N clients besides the probe itself are connected (a
# client started in the background before a guest, so that it sees the guest's first
# events, is waited for with this)
wait_clients() {
	local n=$(( ${2:-10} * 10 )) want=$(( $1 + 1 )) have
	for _ in $(seq $n); do
		snap
		have=$(sed -n 's/^end clients=//p' "$T/stats")
		[ "${have:-0}" -ge "$want" ] && return 0
		sleep 0.1
	done
	fail "$1 clients expected, mtraced has $(( ${have:-1} - 1 )) besides the probe"
}

# grant_maps: mappings of simulated grants in mtraced
grant_maps() {
	grep -c 'mtrace-sim-grant' "/proc/$DPID/maps"
}

alive() {
	kill -0 "$DPID" 2>/dev/null || fail "mtraced died"
}

# Install the build tree into $D (what "meson install" would put on a system).  Its
# output is kept in $T and shown only on failure.
install_destdir() {
	"$MESON" install -C "$MTRACE_BUILD_ROOT" --no-rebuild --quiet --destdir "$D" \
		>"$T/install.log" 2>&1 || { cat "$T/install.log" >&2; fail "meson install"; }
}

# load_guest NAME DOMID SUMMARY MTRACE-LOAD-ARGS...: a guest running mtrace-load, which
# waits for a reader, lingers, and writes its JSON summary to SUMMARY
load_guest() {
	local name=$1 domid=$2 sum=$3
	shift 3
	guest "$name" --domid "$domid" -- \
		"$LOAD" --wait-reader 10 --linger 10 --summary "$sum" "$@" >/dev/null
}

# wait_guests SUMMARY...: until these summary files exist and only Domain-0 is left
wait_guests() {
	local f ok
	for _ in $(seq 600); do
		ok=1
		for f in "$@"; do [ -s "$f" ] || ok=; done
		if [ -n "$ok" ] && [ "$("$SIMXEN" --dir "$SIM" list | wc -l)" -le 1 ]; then
			return 0
		fi
		sleep 0.1
	done
	"$SIMXEN" --dir "$SIM" list >&2
	fail "guests did not finish"
}

# start_harness ARGS...: the stream server over a fake state (tests/stream), on $SOCK;
# returns once it listens.  Its pid is HPID; what it generated goes to $T/harness.json.
start_harness() {
	rm -f "$T/harness.err" "$SOCK"
	"$HARNESS" -s "$SOCK" "$@" >"$T/harness.json" 2>"$T/harness.err" &
	HPID=$!
	PIDS+=("$HPID")
	wait_until 5 grep -q "listening on" "$T/harness.err" && return 0
	cat "$T/harness.err" >&2
	fail "harness did not start"
}

# filter_clients FILTER...: one mtrace-cat per filter (a string of its options), client i
# leaving its argv in $T/c<i>.args, its output in $T/c<i>.out and its --summary in
# $T/c<i>.sum (what client_counts.py reads); -f count unless the filter says -f.  Their
# pids are CPIDS.
filter_clients() {
	local i=0 f fmt
	CPIDS=()
	for f in "$@"; do
		# shellcheck disable=SC2086
		set -- $f
		printf '%s\n' "$@" >"$T/c$i.args"
		fmt=(-f count)
		[[ " $* " == *" -f "* ]] && fmt=()
		"$CAT" -s "$SOCK" "${fmt[@]}" "$@" --summary >"$T/c$i.out" 2>"$T/c$i.sum" &
		CPIDS+=($!)
		PIDS+=($!)
		i=$((i + 1))
	done
}

# conform_clients: three mtrace-cat of the same stream, -f proto, text and json, into
# $T/raw.bin, $T/out.txt, $T/out.json (what conform.py compares); their pids are CPIDS.
conform_clients() {
	local c
	CPIDS=()
	for c in "proto raw.bin" "text out.txt" "json out.json"; do
		set -- $c
		"$CAT" -s "$SOCK" -f "$1" >"$T/$2" 2>"$T/$1.err" &
		CPIDS+=($!)
		PIDS+=($!)
	done
}
