#!/bin/bash
# Three simulated hosts, each an mtraced with the replayed 2014 MirageOS trace and an
# mtrace-load guest, shipped by mtrace-ship into one JetStream nats-server: what
# `mtrace-cat --nats --host H -f json` reads back equals, event for event, the live
# `mtrace-cat -f json` of host H (ids, times, strings: every field).
. "$(dirname "$0")/../rig.sh"
. "$HERE/lib.sh"

nats_start
HOSTS="h1 h2 h3"
declare -A M
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
		--summary "$T/$h/load.json" -n 20000 -p 64 --rate 200000 --seed "$i" >/dev/null
done
for h in $HOSTS; do
	host_domain_events "$h" "${M[$h]}" "$EVENTS"
	"$SIMXEN" --dir "${HSIM[$h]}" destroy "${M[$h]}" >/dev/null
done
for h in $HOSTS; do host_idle "$h"; done
# what mtraced had for the guests is out once both readers are past the last event:
# give them a moment, then stop them
sleep 1
for h in $HOSTS; do
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
