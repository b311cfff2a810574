#!/bin/bash
# The spool's records are not trusted (issue 36, #8): a spool holding records for
# $JS.API.STREAM.PURGE.MTRACE, $SYS, another host, a wildcard, a token more, an id with a
# header in it, a payload that is not a frame and then a header announcing lengths past
# any bound, between two records of this host: the two are published, the others skipped
# and counted, the impossible lengths cut off, and the stream keeps what it had.
. "$(dirname "$0")/../rig.sh"
. "$HERE/lib.sh"

nats_start
host_up h1
# what the stream holds before: 1000 events of h1
ship h1
host_clients h1 1
host_guest h1 first --domid 11 -- "$LOAD" --wait-reader 10 --linger 10 \
	--summary "$T/h1/first.json" -n 1000 -p 64 --rate 2000 >/dev/null
host_idle h1
wait_growing "the stream's DomainDown of the first guest" 20 120 "$T/h1.nats.json" \
	eval '"$CAT" --nats "$NATS_URL" --host h1 -f json >"$T/h1.nats.json" 2>"$T/h1.nats.err" &&
		grep -q "\"type\":\"domain_down\",\"domid\":11," "$T/h1.nats.json"'
ship_stop h1

mkdir -m 0700 "$T/h1/spool"
"$PYTHON" "$HERE/spool_write.py" "$T/h1/spool/mtrace-ship.spool" \
	'mtrace.h1._.events|h1-spooled-1|down:91:before' \
	'$JS.API.STREAM.PURGE.MTRACE|h1-spooled-2|raw:{}' \
	'$SYS.REQ.SERVER.PING|h1-spooled-3|raw:{}' \
	'mtrace.h2._.events|h1-spooled-4|down:92:another host' \
	'mtrace.h1.*.events|h1-spooled-5|down:93:a wildcard' \
	'mtrace.h1.a.b.events|h1-spooled-6|down:94:a token more' \
	'mtrace.h1._.events|h1-spooled-7\r\nNats-Expected-Stream: X|down:95:a header' \
	'mtrace.h1._.stats|h1-spooled-8|raw:not a frame' \
	'mtrace.h1._.events|h1-spooled-9|down:96:after' \
	'lengths:HUGE' || fail "spool_write.py"
ship h1 --stats 0 --spool "$T/h1/spool"
host_clients h1 1
host_guest h1 second --domid 12 -- "$LOAD" --wait-reader 10 --linger 10 \
	--summary "$T/h1/second.json" -n 1000 -p 64 --rate 2000 >/dev/null
host_idle h1
wait_growing "the stream's DomainDown of the second guest" 20 120 "$T/h1.nats.json" \
	eval '"$CAT" --nats "$NATS_URL" --host h1 -f json >"$T/h1.nats.json" 2>"$T/h1.nats.err" &&
		grep -q "\"type\":\"domain_down\",\"domid\":12," "$T/h1.nats.json"'
ship_settled h1
ship_stop h1
note "$(grep 'exit:' "$T/h1.ship.log")"
n=$("$CAT" --nats "$NATS_URL" --host h1 -f count --summary 2>&1 >/dev/null |
	grep -o '"events":[0-9]*' | cut -d: -f2)
[ "$n" = 2000 ] || fail "h1 has $n events in the stream, 2000 were shipped (the stream was purged?)"
for d in 91 96; do
	grep -q "\"type\":\"domain_down\",\"domid\":$d," "$T/h1.nats.json" ||
		fail "the valid spooled record $d is not in the stream"
done
for d in 92 93 94 95; do
	grep -q "\"domid\":$d," "$T/h1.nats.json" && fail "the spooled record $d is in the stream"
done
"$PYTHON" "$HERE/js_subjects.py" "$NATS_PORT" >"$T/subjects" || fail "stream info"
got=$(cut -d' ' -f1 "$T/subjects" | grep -v '^mtrace\.h1\._\.stats$' | sort | tr '\n' ' ')
[ "$got" = "mtrace.h1._.events mtrace.h1.first.events mtrace.h1.second.events " ] ||
	fail "the stream's subjects: $got"
bad=$(figure h1 spool_bad)
[ "$bad" = 7 ] || fail "spool_bad=$bad, 7 records are not this shipper's to publish"
grep -q 'spool.*cut off' "$T/h1.ship.log" || fail "the record of impossible lengths is not reported"
[ ! -s "$T/h1/spool/mtrace-ship.spool" ] || fail "the spool is not empty"
pass "spooled records: 2 of this host published, 7 skipped and counted, the impossible lengths cut off, the stream not purged (2000 events)"
