# lib.sh - the fleet suite's rig on top of tests/rig.sh: a JetStream nats-server on a
# loopback port with its store in $T, and several simulated hosts, each a simulated Xen
# and an mtraced of its own under $T/<host>/.
: "${NATS_SERVER:?}" "${SHIP:?}" "${CAT:?}" "${REPLAY:?}" "${LOAD:?}" "${FIXTURE:?}"

# free_port: one that nothing listens on, below the kernel's ephemeral range: while a test
# has its nats-server down (killed, started again on the same port), no connection of a
# test beside it takes that port as its local one, as it could take one given by bind 0
free_port() {
	"$PYTHON" -c 'import random, socket
lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
while True:
    s, p = socket.socket(), random.randrange(max(1024, lo - 16384), lo)
    try:
        s.bind(("127.0.0.1", p))
        break
    except OSError:
        s.close()
print(p)'
}

NATS_PORT=$(free_port)
NATS_URL=nats://127.0.0.1:$NATS_PORT
NATS_PID=

# the server, its store in $T/nats, and the configuration file $NATS_CONF if set (accounts,
# permissions, max_payload); returns once it takes connections
nats_start() {
	"$NATS_SERVER" -js -sd "$T/nats" -a 127.0.0.1 -p "$NATS_PORT" ${NATS_CONF:+-c "$NATS_CONF"} \
		>>"$T/nats.log" 2>&1 &
	NATS_PID=$!
	PIDS+=("$NATS_PID")
	wait_until 10 grep -q "Server is ready" "$T/nats.log" ||
		fail "nats-server did not start"
	# each start logs its own line: later waits count from here
	NATS_READY=$(grep -c "Server is ready" "$T/nats.log")
}

nats_kill() {
	kill -KILL "$NATS_PID" 2>/dev/null
	wait "$NATS_PID" 2>/dev/null
	NATS_PID=
}

declare -A HSIM HSOCK HLOG HDPID

host_up() {	# NAME: its simulated Xen and mtraced
	local h=$1
	mkdir -p "$T/$h"
	RIG_SIM=$T/$h/sim RIG_SOCK=$T/$h/mtraced.sock RIG_LOG=$T/$h/mtraced.log
	rig_sim_start || fail "$h: simxen"
	rig_daemon_start || fail "$h: mtraced"
	HSIM[$h]=$RIG_SIM HSOCK[$h]=$RIG_SOCK HLOG[$h]=$RIG_LOG HDPID[$h]=$RIG_DAEMON
	PIDS+=("$RIG_DAEMON")
	RIG_DAEMON=
}

host_guest() {	# HOST NAME [create options] -- PROG ARGS...
	local h=$1
	shift
	RIG_SIM=${HSIM[$h]} RIG_DIR=$T/$h
	MTRACE_SIM_DIR=$RIG_SIM rig_guest "$@" || fail "$h: create $1"
	RIG_DIR=$T
}

# clients HOST N: until mtraced of HOST has N clients besides the probe
host_clients() {
	local h=$1 want=$(( $2 + 1 )) have
	for _ in $(seq 100); do
		have=$("$MTRACED_PROBE" -s "${HSOCK[$h]}" stats 2>/dev/null | sed -n 's/^end clients=//p')
		[ "${have:-0}" -ge "$want" ] && return 0
		sleep 0.1
	done
	fail "$h: $2 clients expected, mtraced has $(( ${have:-1} - 1 ))"
}

# host_idle HOST: until only Domain-0 is left on it
host_idle() {
	for _ in $(seq 600); do
		[ "$("$SIMXEN" --dir "${HSIM[$1]}" list | wc -l)" -le 1 ] && return 0
		sleep 0.1
	done
	fail "$1: guests did not finish"
}

# ship HOST [options]: mtrace-ship for HOST in the background (pid in SHIP_PID[HOST])
declare -A SHIP_PID
ship() {
	local h=$1
	shift
	"$SHIP" -s "${HSOCK[$h]}" --nats "$NATS_URL" --host "$h" --log-every 1 "$@" \
		>>"$T/$h.ship.log" 2>&1 &
	SHIP_PID[$h]=$!
	PIDS+=("$!")
}

# ship_settled HOST: until the figures mtrace-ship logs every second have not moved for 2 s
# (looked at every 0.5 s: the 2 s count from their last move, not from a look)
ship_settled() {
	local prev=x cur same=0
	for _ in $(seq 360); do
		cur=$(grep 'mtrace-ship: figures:' "$T/$1.ship.log" | tail -1 | cut -d: -f3-)
		if [ "$cur" = "$prev" ]; then
			same=$((same + 1))
			[ $same -ge 4 ] && return 0
		else
			prev=$cur same=0
		fi
		sleep 0.5
	done
	fail "$1: mtrace-ship's figures still move after 180 s"
}

ship_stop() {	# HOST: SIGTERM, exit 0, the final figures in $T/HOST.ship.log
	kill -TERM "${SHIP_PID[$1]}"
	wait_pid "${SHIP_PID[$1]}" 20 || fail "$1: mtrace-ship exited with an error"
}

# figure HOST KEY: from mtrace-ship's last figures line
figure() {
	grep 'mtrace-ship: .*shipped=' "$T/$1.ship.log" | tail -1 |
		grep -o " $2=[0-9]*" | cut -d= -f2
}

# host_domain_events HOST DOMID N: until mtraced of HOST has read N events of DOMID
host_domain_events() {
	local v
	for _ in $(seq 300); do
		v=$("$MTRACED_PROBE" -s "${HSOCK[$1]}" stats 2>/dev/null |
			sed -n "s/^dom $2 .* events=\\([0-9]*\\) .*/\\1/p")
		[ "${v:-0}" -ge "$3" ] && return 0
		sleep 0.1
	done
	fail "$1: domain $2 has ${v:-0} events, expected $3"
}

# A three-node JetStream cluster on loopback: n1 n2 n3, each with its client port, route
# port, HTTP monitor and store ($T/nN), routes to the other two; CLUSTER_URLS lists the
# three client URLs (what mtrace-ship and mtrace-cat take).
declare -A CL_PORT CL_ROUTE CL_MON CL_PID
CL_NODES="n1 n2 n3"
CLUSTER_URLS=

cluster_node_start() {	# NODE
	local n=$1 m routes=
	for m in $CL_NODES; do
		[ "$m" = "$n" ] || routes=$routes${routes:+,}nats://127.0.0.1:${CL_ROUTE[$m]}
	done
	"$NATS_SERVER" -js -sd "$T/$n" --server_name "$n" --cluster_name mtrace \
		-a 127.0.0.1 -p "${CL_PORT[$n]}" -m "${CL_MON[$n]}" \
		--cluster "nats://127.0.0.1:${CL_ROUTE[$n]}" --routes "$routes" \
		>>"$T/$n.log" 2>&1 &
	CL_PID[$n]=$!
	PIDS+=("$!")
}

cluster_mons() {	# the monitor ports of the nodes running
	local n
	for n in $CL_NODES; do [ -n "${CL_PID[$n]}" ] && echo "${CL_MON[$n]}"; done
}

cluster_up() {	# all three answering with one metadata leader; 2: a node exited
	local n
	for n in $CL_NODES; do kill -0 "${CL_PID[$n]}" 2>/dev/null || return 2; done
	"$PYTHON" "$HERE/jsz.py" meta-all $(cluster_mons) >/dev/null
}

# Returns once the three nodes run and agree on a metadata leader.  A port free_port
# found free can be taken by another test before a node binds it: the node exits
# ("address already in use", once in a ./check) and the cluster is made again on other
# ports, its logs and stores of that try set aside (nN.try1.log).
cluster_start() {
	local n try
	for try in 1 2 3; do
		CLUSTER_URLS=
		for n in $CL_NODES; do
			CL_PORT[$n]=$(free_port) CL_ROUTE[$n]=$(free_port) CL_MON[$n]=$(free_port)
			CLUSTER_URLS=$CLUSTER_URLS${CLUSTER_URLS:+,}nats://127.0.0.1:${CL_PORT[$n]}
		done
		for n in $CL_NODES; do cluster_node_start "$n"; done
		for _ in $(seq 300); do
			cluster_up && return 0
			[ $? = 2 ] && break # a node exited: no use waiting
			sleep 0.1
		done
		for n in $CL_NODES; do
			cluster_kill "$n"
			mv "$T/$n.log" "$T/$n.try$try.log"
			rm -rf "${T:?}/$n"
		done
		note "try $try: the three nodes did not all come up ($(grep -h FTL "$T"/n*.try"$try".log | head -1)); again on other ports"
	done
	fail "the three nodes have no common JetStream metadata leader after 3 tries"
}

cluster_kill() {	# NODE: SIGKILL, no goodbye to its peers
	kill -KILL "${CL_PID[$1]}" 2>/dev/null
	wait "${CL_PID[$1]}" 2>/dev/null
	CL_PID[$1]=
}

stream_leader() {	# "LEADER REPLICAS CURRENT" of MTRACE, as the running nodes see it
	"$PYTHON" "$HERE/jsz.py" leader $(cluster_mons)
}

# wait_progress WHAT STALL LIMIT CMD...: CMD prints a number; returns once it prints one
# that is not below the value in $WANT, and fails when it has not grown for STALL
# seconds or LIMIT seconds have passed (so a stuck reader fails fast, a slow one not).
wait_progress() {
	local what=$1 stall=$2 limit=$3 v last=-1 since=$SECONDS start=$SECONDS
	shift 3
	while :; do
		v=$("$@" 2>/dev/null)
		v=${v:-0}
		[ "$v" -ge "$WANT" ] && return 0
		if [ "$v" -gt "$last" ]; then
			last=$v since=$SECONDS
		elif [ $((SECONDS - since)) -ge "$stall" ]; then
			fail "$what: stuck at $v of $WANT for ${stall} s"
		fi
		[ $((SECONDS - start)) -ge "$limit" ] && fail "$what: $v of $WANT after ${limit} s"
		sleep 0.2
	done
}

# wait_growing WHAT STALL LIMIT FILE CMD...: until CMD succeeds, while FILE (a reader's
# output) keeps growing: fails when it has not grown for STALL seconds (the reader is
# stuck, not slow) or after LIMIT seconds, saying where it was.
wait_growing() {
	local what=$1 stall=$2 limit=$3 file=$4 size last=-1 since=$SECONDS start=$SECONDS
	shift 4
	until "$@"; do
		size=$(stat -c %s "$file" 2>/dev/null || echo 0)
		if [ "$size" != "$last" ]; then
			last=$size since=$SECONDS
		elif [ $((SECONDS - since)) -ge "$stall" ]; then
			fail "$what: $file stopped growing at $size bytes ${stall} s ago"
		fi
		[ $((SECONDS - start)) -ge "$limit" ] && fail "$what: not after ${limit} s ($file: $size bytes)"
		sleep 0.2
	done
}

# The live reader of HOST's mtraced: every record as JSON in $T/HOST.live.json; its pid in LIVE.
live_reader() {	# HOST
	"$CAT" -s "${HSOCK[$1]}" -f json --time 120 >"$T/$1.live.json" 2>"$T/$1.live.err" &
	LIVE=$!
	PIDS+=("$LIVE")
}

# Once DOMID's DomainDown (after its last events) is with the live reader and in the
# stream, stop the live reader: both then hold everything the guest wrote.
guest_down_everywhere() {	# HOST DOMID
	local down="\"type\":\"domain_down\",\"domid\":$2,"
	wait_growing "the live reader's DomainDown of the guest" 20 180 "$T/$1.live.json" \
		grep -q "$down" "$T/$1.live.json"
	# the stream has it once the shipper published it (SIGTERM does not wait for what
	# mtraced sent)
	wait_growing "the stream's DomainDown of the guest" 20 180 "$T/$1.nats.json" \
		eval '"$CAT" --nats "$NATS_URL" --host '"$1"' -f json >"$T/'"$1"'.nats.json" \
			2>"$T/'"$1"'.nats.err" && grep -q "$down" "$T/'"$1"'.nats.json"'
	kill -INT "$LIVE"
	wait_pid "$LIVE" 10 || fail "live mtrace-cat: $(cat "$T/$1.live.err")"
}

# What mtrace-cat --nats reads back of HOST equals the live stream, event for event, and
# is every event the guest wrote (its summary in $T/HOST/load.json); the count in SAME_N.
same_as_live() {	# HOST
	local n want lost
	"$CAT" --nats "$NATS_URL" --host "$1" -f json >"$T/$1.nats.json" 2>"$T/$1.nats.err" ||
		fail "mtrace-cat --nats: $(cat "$T/$1.nats.err")"
	n=$("$PYTHON" "$HERE/same_events.py" "$T/$1.live.json" "$T/$1.nats.json") ||
		fail "read back differs from live: $n"
	want=$(grep -o '"events": *[0-9]*' "$T/$1/load.json" | head -1 | grep -o '[0-9]*$')
	lost=$(grep -o '"lost_in_ring":[0-9]*' "$T/$1.live.json" |
		awk -F: '{ s += $2 } END { print s + 0 }')
	[ "$lost" = 0 ] || fail "mtraced lost $lost events in the ring (overwritten before it read them)"
	[ "$n" = "$want" ] || fail "$n events read back, the guest wrote $want"
	SAME_N=$n
}
