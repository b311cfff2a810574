#!/bin/bash
# Three simulated hosts, each an mtraced with the replayed 2014 MirageOS trace and an
# mtrace-load guest, shipped by mtrace-ship into one JetStream nats-server: what
# `mtrace-cat --nats --host H -f json` reads back equals, event for event, the live
# `mtrace-cat -f json` of host H (ids, times, strings: every field).
#
# The load guests write their 20 000 events in a burst of 0.1 s: each has a ring of
# 1 MiB, which holds the whole burst, so that none is overwritten however late mtraced
# reads (a sanitizer build on a busy machine lagged behind a 256 KiB ring and the ring
# lost events that neither reader could have had).  Every wait below is on progress.
. "$(dirname "$0")/../rig.sh"
. "$HERE/lib.sh"

nats_start
HOSTS="h1 h2 h3"
declare -A M LOAD_DOMID
LOAD_PAGES=256
for h in $HOSTS; do
	host_up "$h"
	"$CAT" -s "${HSOCK[$h]}" -f json --time 120 >"$T/$h.live.json" 2>"$T/$h.live.err" &
	eval "LIVE_$h=\$!"
	PIDS+=("$!")
	ship "$h" --spool "$T/$h/spool"
	host_clients "$h" 2
done
note "three hosts, their shippers and live readers up"
EVENTS=$(( $("$REPLAY" --dump "$FIXTURE" 2>/dev/null | wc -l) + 1 )) # + ring_start
i=0
for h in $HOSTS; do
	i=$((i + 1))
	M[$h]=$(host_guest "$h" mirage -- "$REPLAY" --hold --quiet --speed 0 "$FIXTURE")
	host_guest "$h" load --domid $((10 + i)) -- "$LOAD" --wait-reader 10 --linger 10 \
		--summary "$T/$h/load.json" -n 20000 -p $LOAD_PAGES --rate 200000 --seed "$i" >/dev/null
	LOAD_DOMID[$h]=$((10 + i))
done
for h in $HOSTS; do
	host_domain_events "$h" "${M[$h]}" "$EVENTS"
	"$SIMXEN" --dir "${HSIM[$h]}" destroy "${M[$h]}" >/dev/null
done
for h in $HOSTS; do host_idle "$h"; done
# what mtraced had for the guests is out once each reader has the guests' DomainDown
# (mtraced sends it after the domain's last events): the live reader's file, and the
# stream as mtrace-cat --nats reads it back
downs() {	# FILE: the DomainDown lines of the two guests of $h in it
	grep -cE "\"type\":\"domain_down\",\"domid\":(${M[$h]}|${LOAD_DOMID[$h]})," "$1"
}
for h in $HOSTS; do
	wait_growing "$h: the live reader's DomainDown of the guests" 20 180 "$T/$h.live.json" \
		eval '[ "$(downs "$T/$h.live.json")" = 2 ]'
	wait_growing "$h: the stream's DomainDown of the guests" 20 180 "$T/$h.nats.json" \
		eval '"$CAT" --nats "$NATS_URL" --host "$h" -f json >"$T/$h.nats.json" \
			2>"$T/$h.nats.err" && [ "$(downs "$T/$h.nats.json")" = 2 ]'
	eval "kill -INT \$LIVE_$h"
	eval "wait_pid \$LIVE_$h 10" || fail "$h: live mtrace-cat: $(cat "$T/$h.live.err")"
	ship_stop "$h"
	[ "$(figure "$h" dropped)" = 0 ] || fail "$h: shipper dropped messages"
done
note "shippers stopped: $(grep -h 'exit:' "$T"/*.ship.log | tr '\n' ';')"
for h in $HOSTS; do
	"$CAT" --nats "$NATS_URL" --host "$h" -f json >"$T/$h.nats.json" 2>"$T/$h.nats.err" ||
		fail "$h: mtrace-cat --nats: $(cat "$T/$h.nats.err")"
	n=$("$PYTHON" "$HERE/same_events.py" "$T/$h.live.json" "$T/$h.nats.json") ||
		fail "$h: read back differs from live: $n"
	# the premise: the load's ring never had to overwrite (bytes written <= its size)
	head=$(grep -o '"head": *[0-9]*' "$T/$h/load.json" | head -1 | grep -o '[0-9]*$')
	[ "$head" -le $((LOAD_PAGES * 4096)) ] ||
		fail "$h: the load wrote $head bytes into a ring of $((LOAD_PAGES * 4096)): give it more pages"
	lost=$(grep -o '"lost_in_ring":[0-9]*' "$T/$h.live.json" | awk -F: '{ s += $2 } END { print s + 0 }')
	[ "$lost" = 0 ] || fail "$h: mtraced lost ${lost} events in the rings"
	want=$(( EVENTS + $(grep -o '"events": *[0-9]*' "$T/$h/load.json" | head -1 | grep -o '[0-9]*$') ))
	[ "$n" = "$want" ] || fail "$h: $n events read back, the guests wrote $want"
	pass "$h: $n events read back from JetStream equal the live stream"
done
# no host's reader sees another host's events: the domains of h1 are only its own
grep -c '"type":"event"' "$T/h1.nats.json" >/dev/null
all=$("$CAT" --nats "$NATS_URL" -f count --summary 2>&1 >/dev/null | grep -o '"events":[0-9]*' | cut -d: -f2)
sum=0
for h in $HOSTS; do sum=$((sum + $(grep -c '"type":"event"' "$T/$h.nats.json"))); done
[ "$all" = "$sum" ] || fail "the whole stream has $all events, the hosts $sum"
pass "the whole fleet read back: $all events, the sum of the three hosts"
