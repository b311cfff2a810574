#!/bin/bash
# nats-server killed for 10 s mid-stream, then started again on its store: mtrace-ship
# spools while it is away and drains the spool in order when it is back; what
# `mtrace-cat --nats` reads back equals the live stream, event for event (zero lost,
# zero duplicated), and the shipper's figures say what happened.
. "$(dirname "$0")/../rig.sh"
. "$HERE/lib.sh"

nats_start
host_up h1
live_reader h1
ship h1 --spool "$T/h1/spool" --ack-ms 1000
host_clients h1 2
# about 20 s of events at 20000/s: the outage falls in the middle.  The ring is the
# largest (2 MiB, some 4 s of these events): mtraced on a loaded machine (a sanitizer
# build beside other suites) lagged behind a 256 KiB one and the ring overwrote events
# that no reader could have had.
host_guest h1 load --domid 11 -- "$LOAD" --wait-reader 10 --linger 10 \
	--summary "$T/h1/load.json" -n 400000 -p 512 --rate 20000 >/dev/null
wait_until 10 grep -q 'shipped=[1-9]' "$T/h1.ship.log" || fail "nothing shipped"
sleep 3
nats_kill
note "nats-server killed"
wait_until 10 grep -q 'spooling' "$T/h1.ship.log" || fail "mtrace-ship did not start spooling"
sleep 10
nats_start
note "nats-server back"
wait_until 20 grep -q 'NATS is back' "$T/h1.ship.log" || fail "the spool was not drained"
host_idle h1
guest_down_everywhere h1 11
ship_stop h1
note "$(grep 'exit:' "$T/h1.ship.log")"
spooled=$(figure h1 spooled) drained=$(figure h1 drained) dropped=$(figure h1 dropped)
[ "${spooled:-0}" -gt 0 ] || fail "nothing was spooled during the outage"
[ "$drained" = "$spooled" ] || fail "spooled $spooled, drained $drained"
[ "$dropped" = 0 ] || fail "dropped $dropped"
same_as_live h1
grep -q '"dropped_for_client":[1-9]' "$T/h1.live.json" && fail "the live reader lost events"
pass "outage of 10 s: $spooled messages spooled and drained, $SAME_N events read back, none lost or twice"
