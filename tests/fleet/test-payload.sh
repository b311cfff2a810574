#!/bin/bash
# Messages the server cannot take (issue 36, #7): nats-server with max_payload 64 KiB and
# a user that may not publish on one domain's subject.  A guest with long labels makes
# event batches of hundreds of KiB: mtrace-ship cuts them into batches under the
# server's max_payload and every event is in the stream.  A guest named `refused` (its
# subject denied): its messages are set aside, counted and told downstream as a Loss
# notice, and what comes after still ships.  A spool left with a Goodbye of 100 KiB (no
# message to cut) ahead of a DomainDown: the Goodbye is set aside, the DomainDown ships.
. "$(dirname "$0")/../rig.sh"
. "$HERE/lib.sh"

cat >"$T/nats.conf" <<'CONF'
max_payload: 65536
accounts {
  FLEET {
    jetstream: enabled
    users: [
      { user: h1, password: h1-pw, permissions: {
          publish: { allow: ["mtrace.h1.>", "$JS.API.STREAM.INFO.MTRACE", "$JS.API.STREAM.CREATE.MTRACE"],
                     deny: ["mtrace.h1.refused.events"] }
          subscribe: { allow: ["_INBOX.>"] } } }
      { user: reader, password: reader-pw }
    ]
  }
}
CONF
NATS_CONF=$T/nats.conf nats_start
H1_URL=nats://h1:h1-pw@127.0.0.1:$NATS_PORT
R_URL=nats://reader:reader-pw@127.0.0.1:$NATS_PORT

host_up h1
mkdir -m 0700 "$T/h1/spool"
"$PYTHON" "$HERE/spool_write.py" "$T/h1/spool/mtrace-ship.spool" \
	'mtrace.h1._.events|h1-spooled-1|goodbye:102400' \
	'mtrace.h1._.events|h1-spooled-2|down:98:after the big one' || fail "spool_write.py"
NATS_URL=$H1_URL ship h1 --stats 0 --spool "$T/h1/spool"
host_clients h1 1
"$PYTHON" -c 'import sys
for k in range(64): print("L%d-" % k + "x" * 1000)' >"$T/labels"
# bursts of 10 000 events every 100 ms: mtraced reads each whole, in batches of ~200 KiB
host_guest h1 big --domid 11 -- "$LOAD" --wait-reader 10 --linger 10 --labels-from "$T/labels" \
	--summary "$T/h1/big.json" -n 50000 -p 256 -N 64 --rate 100000 --batch-us 100000 >/dev/null
host_guest h1 refused --domid 12 -- "$LOAD" --wait-reader 10 --linger 10 \
	--summary "$T/h1/refused.json" -n 2000 -p 64 --rate 1000 >/dev/null
host_idle h1
host_guest h1 after --domid 13 -- "$LOAD" --wait-reader 10 --linger 10 \
	--summary "$T/h1/after.json" -n 5000 -p 64 --rate 2500 >/dev/null
host_idle h1
wait_growing "the stream's DomainDown of the last guest" 30 240 "$T/h1.nats.json" \
	eval '"$CAT" --nats "$R_URL" --host h1 -f json >"$T/h1.nats.json" 2>"$T/h1.nats.err" &&
		grep -q "\"type\":\"domain_down\",\"domid\":13," "$T/h1.nats.json"'
ship_settled h1
ship_stop h1
note "$(grep 'exit:' "$T/h1.ship.log")"

written() { grep -o '"events": *[0-9]*' "$T/h1/$1.json" | head -1 | grep -o '[0-9]*$'; }
summary() {	# DOMAIN: mtrace-cat's --summary of it
	"$CAT" --nats "$R_URL" --host h1 -D "$1" -f count --summary 2>&1 >/dev/null |
		grep '^{"events"'
}
key() { echo "$1" | grep -o "\"$2\":[0-9]*" | cut -d: -f2; }
for d in big after; do
	s=$(summary "$d")
	[ $(($(key "$s" events) + $(key "$s" lost_in_ring))) = "$(written "$d")" ] ||
		fail "$d: $(key "$s" events) events in the stream (+ $(key "$s" lost_in_ring) lost in the ring) of $(written "$d") written"
done
s=$(summary refused)
[ "$(key "$s" events)" = 0 ] || fail "the refused domain has $(key "$s" events) events in the stream"
grep -q '"type":"domain_down","domid":98,' "$T/h1.nats.json" ||
	fail "the spooled DomainDown behind the Goodbye too big is not in the stream"
grep -q '"type":"goodbye"' "$T/h1.nats.json" && fail "a Goodbye over max_payload in the stream"
split=$(figure h1 split)
aside=$(figure h1 set_aside)
[ "${split:-0}" -gt 0 ] || fail "no message was cut under max_payload"
[ "${aside:-0}" -ge 2 ] || fail "set_aside=$aside: the Goodbye and the refused domain's messages"
lost=$(figure h1 dropped_events)
refused=$(written refused)
[ "${lost:-0}" -gt 0 ] && [ "$lost" -le "$refused" ] && [ "$(figure h1 loss_published)" = "$lost" ] ||
	fail "dropped_events=$lost (the refused domain wrote $refused), loss_published=$(figure h1 loss_published)"
seen=$(key "$("$CAT" --nats "$R_URL" --host h1 -f count --summary 2>&1 >/dev/null | grep '^{"events"')" dropped_for_client)
[ "$seen" = "$lost" ] || fail "the stream tells $seen events dropped, the shipper $lost"
pass "max_payload 64 KiB: $split messages cut, every event of big and after in the stream; $aside set aside (the refused subject's, the Goodbye of 100 KiB), $lost events told downstream"
