#!/bin/bash
# The bounds of mtrace-ship's publish queue: at most --max-pending publishes in flight,
# at most --queue-max bytes waiting in memory.  nats-server frozen (SIGSTOP, shorter than
# --ack-ms: nothing fails, nothing is spooled) while a guest writes and ends: the window
# fills (4 in flight, never more), then the queue (64 KiB), then the event batches that
# come are dropped, counted, and once the server thaws published as a Loss notice that
# readers of the stream see, and the guest's DomainDown, sent while the queue was full,
# is in the stream;
# read-back events plus the loss (plus what the ring overwrote, lost_in_ring, if the
# machine is that loaded) are what the guest wrote.
. "$(dirname "$0")/../rig.sh"
. "$HERE/lib.sh"

nats_start
host_up h1
ship h1 --max-pending 4 --queue-max 65536 --ack-ms 30000
host_clients h1 1
host_guest h1 load --domid 11 -- "$LOAD" --wait-reader 10 --linger 1 \
	--summary "$T/h1/load.json" -n 100000 -p 512 --rate 20000 >/dev/null
WANT=10 wait_progress "shipped before the freeze" 10 30 figure h1 shipped
kill -STOP "$NATS_PID"
note "nats-server frozen"
wait_until 20 grep -q 'publish queue full' "$T/h1.ship.log" || fail "the queue did not fill"
# the guest ends while the queue is full: its DomainDown is not an event batch to drop
host_idle h1
wait_until 20 eval '"$MTRACED_PROBE" -s "${HSOCK[h1]}" stats | grep -q "^dom 11 .* alive=0 "' ||
	fail "mtraced has not seen domain 11 go"
sleep 1 # mtraced's DomainDown reaches the shipper's queue, still full
kill -CONT "$NATS_PID"
note "nats-server thawed"
wait_until 20 grep -q 'published a loss' "$T/h1.ship.log" || fail "no loss published"
wait_growing "the stream's DomainDown of the guest" 20 180 "$T/h1.nats.json" \
	eval '"$CAT" --nats "$NATS_URL" --host h1 -f json >"$T/h1.nats.json" 2>"$T/h1.nats.err" &&
		grep -q "\"type\":\"domain_down\",\"domid\":11," "$T/h1.nats.json"'
ship_stop h1
note "$(grep 'exit:' "$T/h1.ship.log")"
[ "$(figure h1 in_flight_max)" = 4 ] ||
	fail "$(figure h1 in_flight_max) publishes in flight at most, --max-pending 4"
[ "$(figure h1 spooled)" = 0 ] && [ "$(figure h1 retried)" = 0 ] ||
	fail "spooled or sent again after a freeze shorter than --ack-ms"
lost=$(figure h1 dropped_events)
[ "${lost:-0}" -gt 0 ] || fail "no events counted as dropped"
[ "$(figure h1 loss_published)" = "$lost" ] ||
	fail "dropped $lost events, published a loss of $(figure h1 loss_published)"
"$CAT" --nats "$NATS_URL" --host h1 -f count --summary >/dev/null 2>"$T/h1.nats.err" ||
	fail "mtrace-cat --nats: $(cat "$T/h1.nats.err")"
sum=$(grep '^{"events"' "$T/h1.nats.err")
seen=$(echo "$sum" | grep -o '"dropped_for_client":[0-9]*' | cut -d: -f2)
events=$(echo "$sum" | grep -o '"events":[0-9]*' | cut -d: -f2)
ring=$(echo "$sum" | grep -o '"lost_in_ring":[0-9]*' | cut -d: -f2)
want=$(grep -o '"events": *[0-9]*' "$T/h1/load.json" | head -1 | grep -o '[0-9]*$')
[ "$seen" = "$lost" ] || fail "the stream says $seen dropped, the shipper $lost"
[ $((events + seen + ring)) = "$want" ] ||
	fail "$events read back + $seen dropped + $ring lost in the ring != $want written"
# the same bound to the byte, through the queue itself: the DomainDown that comes when
# not one more byte of events fits is still published (ship-taken.c, host hk)
"$TAKEN" "$NATS_URL" --full >"$T/full.out" 2>&1 || fail "$(cat "$T/full.out")"
"$CAT" --nats "$NATS_URL" --host hk -f json >"$T/hk.json" 2>"$T/hk.err" ||
	fail "mtrace-cat --nats --host hk: $(cat "$T/hk.err")"
grep -q '"type":"domain_down","domid":11,' "$T/hk.json" ||
	fail "no DomainDown of hk in the stream: $(head -c 600 "$T/hk.json")"
[ "$(grep -c '"type":"event"' "$T/hk.json")" = 20 ] ||
	fail "$(grep -c '"type":"event"' "$T/hk.json") events of hk read back, 4 batches of 5 shipped"
pass "queue full: 4 in flight at most, then $lost events dropped, counted, published and seen downstream; $events + $lost + $ring (ring) = $want; the DomainDown of a full queue kept ($(cat "$T/full.out"))"
