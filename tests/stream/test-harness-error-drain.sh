#!/bin/bash
# A client that turns bad while much is queued for it still gets its Error, as long
# as it keeps reading: the Error waits behind what was queued before it, and the close
# timeout (2 s) runs again each time the client has read on (30 s in all).  The client
# here reads one message every 20 ms while 300,000 events a second are generated, and
# turns bad after 20,000 events: seconds of messages are queued ahead of its Error
# (the harness cannot generate fewer than the client reads, whatever the load).  A
# client that stops reading altogether is still closed (harness-stall).
. "$MTRACE_SRC/tests/rig.sh"

N=900000
# -L: the harness stays up after generating (30 s) so that only the close timeout can end the client
start_harness -N $N -r 300000 -D 1 -R 2 -w 1 -q 536870912 -L 30000 -v
"$PROBE" -s "$SOCK" -S -z 20 -T 60 -x ffffffffffffffffffffff -a 20000 >"$T/bad.out" 2>&1 &
BAD=$!
PIDS+=("$BAD")
wait_pid "$BAD" 90 || fail "slow client exited $?"
tail -3 "$T/bad.out"
events=$(sed -n 's/^summary events=\([0-9]*\).*/\1/p' "$T/bad.out")
grep -q "^error 1" "$T/bad.out" || fail "slow bad client: no Error after ${events:-?} events"
# the Error came after what was queued before it, not in place of it
[ "${events:-0}" -gt 20000 ] || fail "only ${events:-0} events before the Error"
pass "a slow client turning bad got its Error after $events events"
