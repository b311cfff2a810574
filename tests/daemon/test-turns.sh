#!/bin/bash
# A turn of mtraced's event loop drains about drain_budget events in all, whichever
# way it was woken, and the clients are written to between turns: with 40 busy guests
# notifying as fast as they are drained, a client that reads all along loses nothing.
# Before: the event-channel callback read pending ports until none was left (up to
# 4096), and guests notified again as soon as they had been drained and unmasked, so
# that one call ran for 0.4 s with 40 guests and 3.7 s with 100
# (bench/daemon/growth.sh): no client was written to meanwhile, its queue filled, and
# 4-42 % of the events were dropped for it (0 after, in every run).
. "$MTRACE_SRC/tests/rig.sh"
: "${LOAD:?}" "${CAT:?}"
N=40
RATE=200000 # per guest: 8 M events/s in all, more than mtraced reads here
SECS=3

sim_start
daemon_start
"$CAT" -s "$SOCK" -f count --summary -t 120 2>"$T/cat.json" &
CAT_PID=$!
PIDS+=("$CAT_PID")
sleep 0.3
for i in $(seq 1 $N); do
	load_guest "g$i" $((100 + i)) "$T/load$i.json" -r 1 -p 128 -t 64 -R $RATE \
		-n $((RATE * SECS)) --batch-us 10000
done
note "$N guests created"
S=()
for i in $(seq 1 $N); do S+=("$T/load$i.json"); done
wait_guests "${S[@]}"
sleep 1
kill -TERM "$CAT_PID"
wait "$CAT_PID"
"$PYTHON" - "$T/cat.json" "${S[@]}" <<'PY' || fail "events dropped for a client that read all along"
import json, sys
cat = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
written = sum(json.load(open(p))["events"] for p in sys.argv[2:])
print("written %d, streamed %d, lost in the rings %d, dropped for the client %d"
      % (written, cat["events"], cat["lost_in_ring"], cat["dropped_for_client"]))
sys.exit(1 if cat["dropped_for_client"] else 0)
PY
alive
daemon_stop
echo "ok: the client was written to all along"
