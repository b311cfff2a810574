#!/bin/bash
# 20 guests at once, each counted exactly; the daemon restarts and re-discovers every
# guest (re-reading their rings from the start: the counts are exact again).
. "$MTRACE_SRC/tests/rig.sh"

N=20
sim_start
daemon_start
declare -a D E
for i in $(seq 1 $N); do
	D[$i]=$(guest "g$i" -- "$HOSTILE" --rings $(( i % 3 + 1 )) --pages 32 count $(( 1000 + 137 * i )))
done
note "$N guests created"
for i in $(seq 1 $N); do E[$i]=$(json_events "g$i"); done
note "$N summaries read"
# one snapshot for all guests, retried until every count is complete (20 s)
check_all() {
	local bad
	for _ in $(seq 80); do
		snap
		bad=
		for i in $(seq 1 $N); do
			[ "$(field "${D[$i]}" events)" = "${E[$i]}" ] || { bad="g$i: $(field "${D[$i]}" events) of ${E[$i]} events"; break; }
		done
		[ -z "$bad" ] && break
		sleep 0.25
	done
	[ -z "$bad" ] || fail "$bad"
	for i in $(seq 1 $N); do
		[ "$(field "${D[$i]}" state)" = running ] || fail "g$i: $(field "${D[$i]}" state)"
		[ "$(field "${D[$i]}" lost)" = 0 ] && [ "$(field "${D[$i]}" corrupt)" = 0 ] ||
			fail "g$i lost or corrupt events"
	done
	[ "$(grep -c '^dom .* alive=1 ' "$T/stats")" = $N ] || fail "not $N guests alive"
}
check_all
note "$N guests counted exactly"

daemon_stop
grep -q "main: stopped" "$DLOG" || fail "no clean stop"
daemon_start
check_all
note "after restart: $N guests re-discovered, counted exactly"
# a guest that dies while the daemon is down is not resurrected
daemon_stop
"$SIMXEN" --dir "$SIM" destroy "${D[1]}" >/dev/null
daemon_start
snap
[ -z "$(field "${D[1]}" state)" ] || fail "dead guest ${D[1]} reported: $(field "${D[1]}" state)"
[ "$(grep -c '^dom .* alive=1 ' "$T/stats")" = $((N - 1)) ] || fail "not $((N - 1)) guests after a death"
daemon_stop
echo "ok: $N guests, restart"
