#!/bin/bash
# A three-node NATS cluster on loopback (the stream MTRACE with 3 replicas, created by
# mtrace-ship --replicas 3) and two simulated hosts shipping to it with all three URLs;
# the node that leads the stream is killed (SIGKILL) mid-stream.  Shipping goes on: the
# publishes refused during the election are sent again with their ids, h1's from its
# spool once the in-place tries (--retry-ms 2000) run out, h2's (no spool, --retry-ms
# 40000: longer than the 30 s the test gives the election, which took 29 s once on a
# loaded 2-core machine) in place until the new leader takes them, in order (the stream read
# message by message has each id once, in order per subject, none missing: js_ids.py).  A
# reader that follows the stream all along goes on (mtrace-cat makes its consumer again
# when it falls silent with messages pending, and skips what a consumer made again
# delivers twice), and what mtrace-cat --nats reads back from the two nodes left equals
# each host's live `mtrace-cat -f json` event for event: none lost, none twice.  Every wait
# is bounded and on progress.
. "$(dirname "$0")/../rig.sh"
. "$HERE/lib.sh"

cluster_start
NATS_URL=$CLUSTER_URLS
note "three nodes up, metadata leader $("$PYTHON" "$HERE/jsz.py" meta $(cluster_mons))"
HOSTS="h1 h2"
declare -A LOAD_DOMID
for h in $HOSTS; do
	host_up "$h"
	"$CAT" -s "${HSOCK[$h]}" -f json --time 180 >"$T/$h.live.json" 2>"$T/$h.live.err" &
	eval "LIVE_$h=\$!"
	PIDS+=("$!")
	if [ "$h" = h1 ]; then
		ship "$h" --spool "$T/$h/spool" --replicas 3 --ack-ms 1000
	else
		ship "$h" --replicas 3 --ack-ms 1000 --retry-ms 40000
	fi
	host_clients "$h" 2
done
wait_until 30 eval '[ "$(stream_leader | cut -d" " -f2)" = 3 ]' ||
	fail "no stream MTRACE with 3 replicas after 30 s: $(stream_leader; grep -h stream "$T"/h*.ship.log)"
note "stream MTRACE: leader, replicas, current followers: $(stream_leader)"
"$CAT" --nats "$NATS_URL" --follow --from-start -f json >"$T/follow.json" 2>"$T/follow.err" &
FOLLOW=$!
PIDS+=("$!")

# 12 s of events per host at 10 000/s: the kill falls in the middle.  Rings of 2 MiB (some
# 6 s of them), as test-outage.sh's: with 256 KiB (0.8 s), a run beside other tests on a
# loaded machine (load 6) once had the live reader lose events
i=0
for h in $HOSTS; do
	i=$((i + 1))
	LOAD_DOMID[$h]=$((10 + i))
	host_guest "$h" load --domid "${LOAD_DOMID[$h]}" -- "$LOAD" --wait-reader 10 --linger 20 \
		--summary "$T/$h/load.json" -n 120000 -p 512 --rate 10000 --seed "$i" >/dev/null
done
for h in $HOSTS; do
	WANT=100 wait_progress "$h: shipped before the kill" 10 30 figure "$h" shipped
done
sleep 2 # well into the stream (not a wait for anything: where the kill falls)
read -r leader _ <<<"$(stream_leader)"
[ -n "$leader" ] || fail "no stream leader to kill"
# The node killed leads the stream but not the cluster's metadata: with both gone at
# once, nats-server 2.9 took 29 s and more than 30 s to give the stream a new leader
# (2 runs of 3 on this machine), an election of the metadata group this test is not
# about.  The stream's leadership is moved off the metadata leader first.
meta=$("$PYTHON" "$HERE/jsz.py" meta $(cluster_mons))
if [ "$leader" = "$meta" ]; then
	"$PYTHON" "$HERE/js_stepdown.py" "${CL_PORT[$meta]}" >"$T/stepdown.json" ||
		fail "no answer to the stream leader stepdown"
	wait_until 30 eval 'read -r leader _ <<<"$(stream_leader)"; [ -n "$leader" ] && [ "$leader" != "$meta" ]' ||
		fail "the stream's leader is still the metadata leader $meta 30 s after the stepdown: $(cat "$T/stepdown.json")"
	note "stream leadership moved off the metadata leader $meta to $leader"
fi
declare -A AT_KILL
for h in $HOSTS; do AT_KILL[$h]=$(figure "$h" shipped); done
cluster_kill "$leader"
note "killed $leader, the stream leader (shipped so far: ${AT_KILL[*]})"
wait_until 30 eval 'read -r l _ <<<"$(stream_leader)"; [ -n "$l" ] && [ "$l" != "$leader" ]' ||
	fail "no new stream leader 30 s after killing $leader: $(stream_leader)"
note "new stream leader: $(stream_leader)"
# Readers that start now: each makes an ordered consumer, which nats-server 2.9 puts on
# one peer of the stream picked at random, the dead one too (where it never answers).
# A host with nothing in the stream: each read is at its end at once.
for i in 1 2 3 4 5 6 7 8; do
	"$CAT" --nats "$NATS_URL" --host nosuch -f json >"$T/nosuch.json" 2>"$T/nosuch.err" ||
		fail "a reader started after the kill (read $i): $(cat "$T/nosuch.err")"
	[ -s "$T/nosuch.json" ] && fail "a host with nothing in the stream read: $(head -3 "$T/nosuch.json")"
done
note "8 readers started after the kill read the stream: $(grep -c . "$T/nosuch.err") lines said"
for h in $HOSTS; do
	WANT=$((AT_KILL[$h] + 100)) wait_progress "$h: shipping after the kill" 20 120 \
		figure "$h" shipped
done
note "shipping goes on: $(for h in $HOSTS; do grep 'figures:' "$T/$h.ship.log" | tail -1; done | tr '\n' ';')"

for h in $HOSTS; do host_idle "$h"; done
downs() {	# FILE: the DomainDown lines of host $h's load guest in it
	grep -c "\"type\":\"domain_down\",\"domid\":${LOAD_DOMID[$h]}," "$1"
}
for h in $HOSTS; do
	wait_growing "$h: the live reader's DomainDown of the guests" 20 180 "$T/$h.live.json" \
		eval '[ "$(downs "$T/$h.live.json")" = 1 ]'
	wait_growing "$h: the stream's DomainDown of the guests" 20 180 "$T/$h.nats.json" \
		eval '"$CAT" --nats "$NATS_URL" --host "$h" -f json >"$T/$h.nats.json" \
			2>"$T/$h.nats.err" && [ "$(downs "$T/$h.nats.json")" = 1 ]'
	eval "kill -INT \$LIVE_$h"
	eval "wait_pid \$LIVE_$h 10" || fail "$h: live mtrace-cat: $(cat "$T/$h.live.err")"
	ship_stop "$h"
done
note "shippers stopped: $(grep -h 'exit:' "$T"/*.ship.log | tr '\n' ';')"
total=0
for alive in $CL_NODES; do [ -n "${CL_PID[$alive]}" ] && break; done
for h in $HOSTS; do
	[ "$(figure "$h" dropped)" = 0 ] || fail "$h: the shipper dropped messages"
	grep -q '"lost_in_ring":[1-9]\|"dropped_for_client":[1-9]' "$T/$h.live.json" &&
		fail "$h: the live reader lost events (mtraced's ring or its client queue)"
	n=$("$PYTHON" "$HERE/same_events.py" "$T/$h.live.json" "$T/$h.nats.json") ||
		fail "$h: read back differs from live: $n"
	want=$(grep -o '"events": *[0-9]*' "$T/$h/load.json" | head -1 | grep -o '[0-9]*$')
	[ "$n" = "$want" ] || fail "$h: $n events read back, the guest wrote $want"
	total=$((total + n))
	# message by message: each id once, in order on each subject, none missing
	ids=$("$PYTHON" "$HERE/js_ids.py" "${CL_PORT[$alive]}" "$h") ||
		fail "$h: the stream's message ids: $ids"
	pass "$h: $n events read back from the two nodes left equal the live stream; its ${ids% *} messages each once, in order"
done
# the reader that followed the stream through the kill has every event of both hosts,
# in order per domain, none twice
WANT=$total wait_progress "the follower" 20 180 grep -c '"type":"event"' "$T/follow.json"
kill -INT "$FOLLOW"
wait_pid "$FOLLOW" 10 || fail "the following mtrace-cat --nats: $(cat "$T/follow.err")"
cat "$T"/h1.live.json "$T"/h2.live.json >"$T/all.live.json"
n=$("$PYTHON" "$HERE/same_events.py" "$T/all.live.json" "$T/follow.json") ||
	fail "the follower differs from the live streams: $n"
[ "$(figure h2 retried)" -gt 0 ] || fail "h2 sent nothing again: did the kill miss the stream?"
[ "$(figure h2 spooled)" = 0 ] || fail "h2 has no spool but spooled"
again=$(grep -c 'delivered again; skipped' "$T/follow.err")
remade=$(grep -c 'consumer is silent; made again' "$T/follow.err")
pass "leader $leader killed mid-stream: $n events of 2 hosts shipped and followed ($again messages delivered again skipped, consumer made again $remade times), none lost or twice (h1 spooled $(figure h1 spooled) retried $(figure h1 retried), h2 retried $(figure h2 retried))"
