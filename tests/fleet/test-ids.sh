#!/bin/bash
# Host isolation in one stream (issue 36, #2): two hosts with the per-host NATS users of
# docs/fleet.md ("Per-host users"): each may publish on mtrace.<its host>.> and ask for
# the stream's info, nothing else.  The server refuses h2 on h1's subjects and on the
# stream's purge and delete.  Then h2's user, helped by a reader's rights to see h1's
# message ids as they are stored, publishes on its own subjects the ids that would follow
# h1's (js_forge.py claim), all the while h1 ships 50 000 events: JetStream's
# de-duplication is stream-wide, so predictable ids would make it drop h1's messages.
# Nothing of h1 may be lost: every event in the stream, every id once and in order, and
# h1's shipper reports no id taken.
. "$(dirname "$0")/../rig.sh"
. "$HERE/lib.sh"

# the shippers' reply subjects: per host where the shipper can choose them (then a host
# cannot read another's acknowledgements); a shipper without --inbox-prefix (before
# issue 36) uses _INBOX, which its user must then be allowed
if "$SHIP" --help | grep -q -- --inbox-prefix; then
	inbox() { echo "_INBOX_$1.>"; }
	inbox_opt() { echo "--inbox-prefix=_INBOX_$1"; }
else
	inbox() { echo "_INBOX.>"; }
	inbox_opt() { echo "--stats=0"; }
fi
host_user() {	# HOST: its user, as docs/fleet.md gives it
	cat <<USER
      { user: $1, password: $1-pw, permissions: {
          publish: { allow: ["mtrace.$1.>", "\$JS.API.STREAM.INFO.MTRACE"] }
          subscribe: { allow: ["$(inbox "$1")"] } } }
USER
}
cat >"$T/nats.conf" <<CONF
accounts {
  FLEET {
    jetstream: enabled
    users: [
      { user: admin, password: admin-pw }
$(host_user h1)
$(host_user h2)
      { user: reader, password: reader-pw, permissions: {
          publish: { allow: ["\$JS.API.>", "\$JS.FC.>", "\$JS.ACK.>"],
                     deny: ["mtrace.>", "\$JS.API.STREAM.PURGE.>", "\$JS.API.STREAM.DELETE.>",
                            "\$JS.API.STREAM.MSG.DELETE.>", "\$JS.API.STREAM.UPDATE.>"] }
          subscribe: { allow: ["_INBOX.>"] } } }
    ]
  }
}
CONF
NATS_CONF=$T/nats.conf nats_start
url() { echo "nats://$1:$1-pw@127.0.0.1:$NATS_PORT"; }
"$PYTHON" "$HERE/js_forge.py" "$NATS_PORT" admin:admin-pw create || fail "cannot create the stream"

# what h2's user may not do
for subj in mtrace.h1._.events mtrace.h1.load.events '$JS.API.STREAM.PURGE.MTRACE' \
	'$JS.API.STREAM.DELETE.MTRACE' '$JS.API.STREAM.MSG.DELETE.MTRACE'; do
	r=$("$PYTHON" "$HERE/js_forge.py" "$NATS_PORT" h2:h2-pw try "$subj")
	[ "$r" = refused ] || fail "h2's user on $subj: $r (should be refused)"
done
note "h2's user is refused h1's subjects and the stream's purge and delete"

host_up h1
host_up h2
# no statistics: the figures stand still once the guests are done (ship_settled)
NATS_URL=$(url h1) ship h1 --stats 0 "$(inbox_opt h1)"
NATS_URL=$(url h2) ship h2 --stats 0 "$(inbox_opt h2)"
host_clients h1 1
host_clients h2 1
"$PYTHON" "$HERE/js_forge.py" "$NATS_PORT" reader:reader-pw h2:h2-pw claim \
	mtrace.h1.load.events,mtrace.h1._.events h2 "$T/stop" \
	>"$T/forge.out" 2>"$T/forge.err" &
FORGER=$!
PIDS+=("$FORGER")
host_guest h1 load --domid 11 -- "$LOAD" --wait-reader 10 --linger 10 \
	--summary "$T/h1/load.json" -n 50000 -p 64 --rate 5000 >/dev/null
host_guest h2 load --domid 11 -- "$LOAD" --wait-reader 10 --linger 10 \
	--summary "$T/h2/load.json" -n 5000 -p 64 --rate 1000 >/dev/null
host_idle h1
host_idle h2
ship_settled h1
touch "$T/stop"
wait_pid "$FORGER" 20 || fail "the forger failed: $(cat "$T/forge.err")"
note "forger: $(cat "$T/forge.out")"
grep -q '^claimed [1-9]' "$T/forge.out" || fail "the forger saw no id of h1 to claim"
ship_stop h1
ship_stop h2
note "h1: $(grep 'exit:' "$T/h1.ship.log")"

"$CAT" --nats "$(url reader)" --host h1 -f count --summary >/dev/null 2>"$T/h1.nats.err" ||
	fail "mtrace-cat --nats: $(cat "$T/h1.nats.err")"
sum=$(grep '^{"events"' "$T/h1.nats.err")
events=$(echo "$sum" | grep -o '"events":[0-9]*' | cut -d: -f2)
ring=$(echo "$sum" | grep -o '"lost_in_ring":[0-9]*' | cut -d: -f2)
want=$(grep -o '"events": *[0-9]*' "$T/h1/load.json" | head -1 | grep -o '[0-9]*$')
[ $((events + ring)) = "$want" ] ||
	fail "h1: $events events in the stream (+ $ring lost in the ring) of $want written; its shipper says shipped=$(figure h1 shipped) dropped=$(figure h1 dropped)"
"$PYTHON" "$HERE/js_ids.py" "$NATS_PORT" h1 reader:reader-pw >"$T/ids" 2>&1 ||
	fail "h1's message ids in the stream: $(cat "$T/ids")"
[ "$(figure h1 taken)" = 0 ] || fail "h1's shipper found $(figure h1 taken) of its ids taken"
[ "$(figure h1 dropped)" = 0 ] || fail "h1's shipper dropped $(figure h1 dropped) messages"
pass "per-host users: h2 refused on h1's subjects and the stream's purge/delete; h2 $(cat "$T/forge.out"); yet all $want events of h1 in the stream, its $(cut -d' ' -f1 "$T/ids") message ids each once, in order"
