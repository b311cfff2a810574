#!/bin/bash
# A guest rewriting its xenstore announcement thousands of times a second (a new bad
# value each time, the good one now and then, so that it flips between traced and
# refused) costs the shared journal a few lines, not thousands: guest-caused lines
# come out of a per-domain allowance (10 at once, then one every 6 s, with a count of
# what was held back), and a reason with a new value in it is not a new reason.
# Clients cost one line each at info (their Hello), not two.  Before: ~1,900 lines a
# second for the guest, and "connected" + "disconnected" lines for every client.
. "$MTRACE_SRC/tests/rig.sh"
: "${TABLE_GUEST:?}"

sim_start
daemon_start
F=$(guest xsflood -- "$TABLE_GUEST" xsflood 2)
for _ in $(seq 100); do grep -q writes "$T/xsflood.log" 2>/dev/null && break; sleep 0.1; done
grep -q writes "$T/xsflood.log" || fail "the guest did not finish"
alive
n=$(grep -c "domain $F " "$DLOG")
note "$(cat "$T/xsflood.log"): $n log lines about domain $F"
[ "$n" -le 12 ] || { grep "domain $F " "$DLOG" | tail -5; fail "$n log lines for one guest in 3 s"; }
before=$(wc -l <"$DLOG")
for _ in 1 2 3 4 5; do snap; done
after=$(wc -l <"$DLOG")
[ $((after - before)) -le 5 ] || fail "$((after - before)) log lines for 5 clients"
daemon_stop
