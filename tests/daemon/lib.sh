# lib.sh - sourced by the daemon tests: a fresh directory, the simulated Xen, mtraced,
# guests, and everything killed at exit.  Binaries come from the environment (meson).
set -u
: "${SIMXEN:?}" "${MTRACED:?}" "${PROBE:?}" "${HOSTILE:?}"

T=$(mktemp -d "${TMPDIR:-/tmp}/mtrace-dtest.XXXXXX")
SIM=$T/sim
SOCK=$T/mtraced.sock
DLOG=$T/mtraced.log
DPID=
BG_PIDS=

cleanup() {
	local rc=$?
	for p in $BG_PIDS; do kill -KILL "$p" 2>/dev/null; done
	[ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null
	"$SIMXEN" -d "$SIM" stop >/dev/null 2>&1
	if [ $rc -ne 0 ] && [ -f "$DLOG" ]; then
		echo "--- mtraced log (last 60 lines)"
		tail -60 "$DLOG"
	fi
	rm -rf "$T"
	exit $rc
}
trap cleanup EXIT
trap 'exit 1' TERM INT

fail() {
	echo "FAIL: $*"
	exit 1
}

note() {
	echo "# [${SECONDS}s] $*"
}

sim_start() {
	mkdir -p "$SIM"
	"$SIMXEN" -d "$SIM" start >/dev/null || fail "mtrace-simxen start"
}

# daemon_start [mtraced options...]: returns once the socket answers
daemon_start() {
	rm -f "$SOCK"
	"$MTRACED" -f --backend sim --sim-dir "$SIM" -s "$SOCK" "$@" 2>>"$DLOG" &
	DPID=$!
	for _ in $(seq 100); do
		[ -S "$SOCK" ] && "$PROBE" "$SOCK" stats >/dev/null 2>&1 && return 0
		kill -0 "$DPID" 2>/dev/null || fail "mtraced exited at start-up"
		sleep 0.1
	done
	fail "mtraced did not come up"
}

# daemon_stop: SIGTERM, expect exit status 0 within 10 s
daemon_stop() {
	local rc
	kill -TERM "$DPID"
	for _ in $(seq 100); do
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$DPID" 2>/dev/null && fail "mtraced did not stop on SIGTERM"
	wait "$DPID"
	rc=$?
	DPID=
	[ $rc -eq 0 ] || fail "mtraced exited with status $rc"
}

# guest NAME [create options] -- PROG ARGS: prints the domid; output goes to $T/NAME.out
guest() {
	local name=$1
	shift
	"$SIMXEN" -d "$SIM" create --name "$name" --log "$T/$name.out" "$@" ||
		fail "create $name"
}

# The system's python (a version manager's shim on PATH can take seconds to start).
PYTHON=python3
[ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3

# json_events NAME: the total "events" of the JSON summary a guest printed, once the
# summary is complete (ends with a brace); the total is the first "events" key.
json_events() {
	local v
	for _ in $(seq 300); do
		if [ -s "$T/$1.out" ] && tail -c 3 "$T/$1.out" | grep -q '}'; then
			v=$(grep -o '"events": *[0-9]*' "$T/$1.out" | head -1 | grep -o '[0-9]*$')
			[ -n "$v" ] && { echo "$v"; return 0; }
		fi
		sleep 0.1
	done
	fail "guest $1 printed no summary"
}

# snap: one Stats into $T/stats
snap() {
	"$PROBE" "$SOCK" stats >"$T/stats" 2>>"$T/probe.err" || fail "no statistics from mtraced"
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

# grant_maps: pages of simulated grants mapped in mtraced
grant_maps() {
	grep -c 'mtrace-sim-grant' "/proc/$DPID/maps"
}

alive() {
	kill -0 "$DPID" 2>/dev/null || fail "mtraced died"
}
