#!/bin/bash
# The spool full while NATS is away: what mtrace-ship cannot keep is counted, and once
# NATS is back published as a Loss notice that readers of the stream see (mtrace-cat
# --nats --summary: dropped_for_client); read-back events plus the loss (and what the
# ring overwrote before mtraced read it, if the machine is that loaded: lost_in_ring,
# also in the stream) are what the guest wrote.
. "$(dirname "$0")/../rig.sh"
. "$HERE/lib.sh"

nats_start
host_up h1
ship h1 --spool "$T/h1/spool" --spool-max 100000 --ack-ms 1000
host_clients h1 1
host_guest h1 load --domid 11 -- "$LOAD" --wait-reader 10 --linger 10 \
	--summary "$T/h1/load.json" -n 200000 -p 64 --rate 20000 >/dev/null
wait_until 10 grep -q 'shipped=[1-9]' "$T/h1.ship.log" || fail "nothing shipped"
nats_kill
wait_until 20 grep -q 'spool full' "$T/h1.ship.log" || fail "the spool did not fill"
nats_start
wait_until 20 grep -q 'published a loss' "$T/h1.ship.log" || fail "no loss published"
host_idle h1
# the shipper is stopped once the stream has the guest's DomainDown, its last message
# (SIGTERM does not wait for what mtraced sent)
wait_growing "the stream's DomainDown of the guest" 20 180 "$T/h1.nats.json" \
	eval '"$CAT" --nats "$NATS_URL" --host h1 -f json >"$T/h1.nats.json" 2>"$T/h1.nats.err" &&
		grep -q "\"type\":\"domain_down\",\"domid\":11," "$T/h1.nats.json"'
ship_stop h1
note "$(grep 'exit:' "$T/h1.ship.log")"
lost=$(figure h1 dropped_events)
published=$(figure h1 loss_published)
[ "${lost:-0}" -gt 0 ] || fail "no events counted as dropped"
[ "$published" = "$lost" ] || fail "dropped $lost events, published a loss of $published"
"$CAT" --nats "$NATS_URL" --host h1 -f count --summary >/dev/null 2>"$T/h1.nats.err" ||
	fail "mtrace-cat --nats: $(cat "$T/h1.nats.err")"
sum=$(grep '^{"events"' "$T/h1.nats.err")
seen=$(echo "$sum" | grep -o '"dropped_for_client":[0-9]*' | cut -d: -f2)
events=$(echo "$sum" | grep -o '"events":[0-9]*' | cut -d: -f2)
want=$(grep -o '"events": *[0-9]*' "$T/h1/load.json" | head -1 | grep -o '[0-9]*$')
# overwritten in the ring before mtraced read it (a loaded machine): said downstream too
ring=$(echo "$sum" | grep -o '"lost_in_ring":[0-9]*' | cut -d: -f2)
[ "$seen" = "$lost" ] || fail "the stream says $seen dropped, the shipper $lost"
[ $((events + seen + ring)) = "$want" ] ||
	fail "$events read back + $seen dropped + $ring lost in the ring != $want written"
pass "spool full: $lost events counted, published and seen downstream; $events + $lost + $ring (ring) = $want"
