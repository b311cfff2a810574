#!/bin/bash
# mtrace-cat keeps its exit behaviour unless asked: without --reconnect it ends (status
# 0) when mtraced goes away; with --reconnect it says so, waits, subscribes again to
# the new mtraced and carries on until -t.
. "$MTRACE_SRC/tests/rig.sh"
: "${CAT:?}"

sim_start
daemon_start
G=$(guest flood -- "$HOSTILE" flood)
wait_match "$G" events '^[1-9]' 10
"$CAT" -s "$SOCK" -f count --summary --time 20 2>"$T/plain.err" &
PLAIN=$!
"$CAT" -s "$SOCK" -f count --summary --reconnect --time 4 2>"$T/re.err" &
RE=$!
PIDS+=("$PLAIN" "$RE")
sleep 0.7
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null
DPID=
wait "$PLAIN"
rc=$?
[ $rc = 0 ] || fail "mtrace-cat without --reconnect: status $rc"
note "without --reconnect: ended with 0 when mtraced was killed"
for _ in $(seq 50); do grep -q "waiting for it" "$T/re.err" && break; sleep 0.1; done
grep -q "waiting for it" "$T/re.err" || fail "--reconnect: not waiting: $(cat "$T/re.err")"
kill -0 "$RE" || fail "--reconnect: exited"
daemon_start
for _ in $(seq 60); do grep -q "reconnected" "$T/re.err" && break; sleep 0.1; done
grep -q "reconnected" "$T/re.err" || fail "--reconnect: did not reconnect: $(cat "$T/re.err")"
wait "$RE"
rc=$?
[ $rc = 0 ] || fail "--reconnect: status $rc"
"$PYTHON" - "$T/plain.err" "$T/re.err" <<'PY' || fail "--reconnect got no more events than before the kill"
import json, sys
def events(p):
    return [json.loads(l)["events"] for l in open(p) if l.startswith("{")][-1]
a, b = events(sys.argv[1]), events(sys.argv[2])
print("# events: until the kill %d, with --reconnect %d" % (a, b))
sys.exit(0 if b > a else 1)
PY
"$SIMXEN" --dir "$SIM" destroy "$G" >/dev/null
daemon_stop
