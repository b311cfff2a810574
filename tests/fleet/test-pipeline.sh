#!/bin/bash
# mtrace-ship's publishes are pipelined, and an outage with publishes in flight spools
# and replays them in order, none lost and none stored twice.
#
#  1. nats-server frozen (SIGSTOP) for 1 s while the guest writes: no acknowledgement can
#     come, yet the shipper goes on publishing what mtraced sends: many publishes wait
#     for their acknowledgement at once (in_flight_max; a shipper that waited for each
#     acknowledgement before the next publish would show 1), and once the server thaws
#     they are all acknowledged, none sent again, none spooled.
#  2. Frozen again, so that publishes are in flight, then killed (SIGKILL) and started
#     again 4 s later on its store: the publishes that were out fail (their
#     acknowledgements time out), the shipper spools them, in order, with what follows,
#     and drains the spool when NATS is back.
#  3. mtraced stopped: its Goodbye is in the stream too.
# Then the stream, message by message (js_ids.py): no message id twice, on every subject
# the ids in the order they were given, every id of the connection there; and the events
# read back by mtrace-cat --nats equal the live stream's.
. "$(dirname "$0")/../rig.sh"
. "$HERE/lib.sh"

nats_start
host_up h1
live_reader h1
ship h1 --spool "$T/h1/spool" --ack-ms 2000 --retry-ms 1000
host_clients h1 2
# 16 s of events at 25 000/s into a ring of 2 MiB (some 4 s of them: mtraced on a loaded
# machine must not fall behind the ring, test-outage.sh)
host_guest h1 load --domid 11 -- "$LOAD" --wait-reader 10 --linger 10 \
	--summary "$T/h1/load.json" -n 400000 -p 512 --rate 25000 >/dev/null
WANT=20 wait_progress "shipped before the freeze" 10 30 figure h1 shipped

# 1. pipelining
kill -STOP "$NATS_PID"
note "nats-server frozen"
sleep 1
before=$(figure h1 shipped)
kill -CONT "$NATS_PID"
WANT=$((before + 20)) wait_progress "shipped after the thaw" 10 30 figure h1 shipped
sleep 1.2 # the next figures line (--log-every 1)
inflight=$(figure h1 in_flight_max)
note "after the freeze: $(grep 'figures:' "$T/h1.ship.log" | tail -1)"
[ "${inflight:-0}" -ge 16 ] ||
	fail "at most ${inflight:-0} publishes in flight while nats-server was frozen: not pipelined"
[ "$(figure h1 retried)" = 0 ] || fail "publishes sent again after a freeze shorter than --ack-ms"
[ "$(figure h1 spooled)" = 0 ] || fail "spooled after a freeze shorter than --ack-ms"
pass "pipelined: $inflight publishes in flight at once while nats-server was frozen, all acknowledged after it"

# 2. an outage with publishes in flight
kill -STOP "$NATS_PID"
sleep 0.5
nats_kill
note "nats-server killed while frozen"
wait_until 10 grep -q 'NATS is away; spooling' "$T/h1.ship.log" || fail "mtrace-ship did not spool"
sleep 3
nats_start
note "nats-server back"
wait_until 30 grep -q 'NATS is back' "$T/h1.ship.log" || fail "the spool was not drained"
host_idle h1
guest_down_everywhere h1 11

# 3. mtraced's Goodbye, shipped before it goes
kill -TERM "${HDPID[h1]}"
wait_until 10 grep -q 'mtraced went away' "$T/h1.ship.log" || fail "the shipper did not see mtraced go"
ship_stop h1
note "$(grep 'exit:' "$T/h1.ship.log")"
"$CAT" --nats "$NATS_URL" --host h1 -f text >"$T/h1.nats.txt" 2>"$T/h1.nats.err" ||
	fail "mtrace-cat --nats -f text: $(cat "$T/h1.nats.err")"
grep -q '^# goodbye reason=.*daemon stopping' "$T/h1.nats.txt" ||
	fail "mtraced's Goodbye is not in the stream: $(grep '^# goodbye' "$T/h1.nats.txt")"

spooled=$(figure h1 spooled) drained=$(figure h1 drained)
[ "${spooled:-0}" -gt 0 ] || fail "nothing was spooled during the outage"
[ "$drained" = "$spooled" ] || fail "spooled $spooled, drained $drained"
[ "$(figure h1 dropped)" = 0 ] || fail "dropped $(figure h1 dropped)"
ids=$("$PYTHON" "$HERE/js_ids.py" "$NATS_PORT" h1) || fail "the stream's message ids: $ids"
same_as_live h1
pass "outage with publishes in flight: $spooled spooled and drained; the stream's ${ids% *} messages of host h1 each once, in order, none missing; $SAME_N events as live; mtraced's Goodbye in it"
