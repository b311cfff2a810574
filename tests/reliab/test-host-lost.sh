#!/bin/bash
# The host's xenstore and event channels going away under mtraced (here: the simulated
# Xen's broker killed) is not a state mtraced can serve from: it must say so once and
# exit non-zero, so that the service manager restarts it (Restart=on-failure), not spin.
# Before: a tight loop of "xenstore watch: Connection reset by peer" and "evtchn
# pending" lines at 20-40 % CPU, for as long as nobody killed it.
. "$MTRACE_SRC/tests/rig.sh"

sim_start
daemon_start
G=$(guest busy -- "$LOAD" --duration 30 --rate 20000)
wait_match "$G" events '^[1-9]' 20
pid=$DPID
broker=$(pgrep -f "mtrace-simxen.*$SIM" | head -1)
[ -n "$broker" ] || broker=$(cat "$SIM/broker.pid" 2>/dev/null)
[ -n "$broker" ] || fail "no broker pid"
kill -KILL "$broker"
note "broker $broker killed"
st=0
for _ in $(seq 100); do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
	lines=$(wc -l <"$DLOG")
	fail "mtraced still running 10 s after the host went away ($lines log lines)"
fi
wait "$pid" 2>/dev/null
st=$?
[ "$st" -ne 0 ] || fail "mtraced exited 0: a service manager would not restart it"
lost=$(grep -c "lost the host" "$DLOG")
[ "$lost" -eq 1 ] || fail "expected one 'lost the host' line, got $lost"
n=$(grep -c "xenstore watch\|evtchn pending" "$DLOG")
[ "$n" -le 2 ] || fail "$n error lines: the loop went on"
pass "mtraced exited with status $st, one line said why"
DPID=
RIG_DAEMON=
