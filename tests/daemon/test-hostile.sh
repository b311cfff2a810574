#!/bin/bash
# Hostile guests: garbage ring contents, absurd page counts, bad grant refs, xenstore
# garbage, an event-channel storm and a guest that never stops writing.  Each is
# logged and counted against that guest only: the well-behaved guests' counts stay
# exact and the daemon keeps serving.
. "$MTRACE_SRC/tests/rig.sh"

# time_snap: milliseconds one statistics round trip takes (process start included)
time_snap() {
	local t0 t1
	t0=$(date +%s%N)
	snap
	t1=$(date +%s%N)
	echo $(( (t1 - t0) / 1000000 ))
}

sim_start
# a per-guest cap that the good guests (at most 260 pages) stay under
daemon_start --set max_pages_per_guest=1000
BASE=0
for _ in 1 2 3; do b=$(time_snap); [ "$b" -gt "$BASE" ] && BASE=$b; done
note "statistics answered in $BASE ms (slowest of 3) before the hostile guests"
GOOD1=$(guest good1 -- "$HOSTILE" --rings 2 --pages 128 count 20000)

# a domain whose xenstore we fill by hand (as dom0 may), running nothing of ours
XS=$(guest xs -- sleep 600)
P=/local/domain/$XS/data/mtrace
xsw() { "$SIMXEN" --dir "$SIM" xs-write "$1" "$2" || fail "xs-write $1"; }
announce() {	# rings ref pages port
	xsw $P/version 1; xsw $P/clock monotonic; xsw $P/event-channel "$4"
	xsw $P/rings "$1"
	for i in $(seq 0 $(($1 - 1))); do xsw $P/ring/$i/ref "$2"; xsw $P/ring/$i/pages "$3"; done
	xsw $P/state ready
}
announce 1 7 1000000 5
wait_match "$XS" state '^bad: ring/0/pages: "1000000"'
xsw $P/ring/0/pages 512; xsw $P/ring/1/ref 7; xsw $P/ring/1/pages 512; xsw $P/rings 2
wait_match "$XS" state '^bad: 1026 pages announced, more than max_pages_per_guest 1000'
xsw $P/rings 1; xsw $P/ring/0/pages 16; xsw $P/ring/0/ref 424242
wait_match "$XS" state '^bad: ring 0: cannot map header ref 424242'
xsw $P/rings 1x
wait_match "$XS" state '^bad: rings: "1x"'
xsw $P/rings -1
wait_match "$XS" state '^bad: rings: "-1"'
xsw $P/rings 1
xsw $P/clock "$(printf 'mono\001\377')"
wait_match "$XS" state '^bad: clock: "mono\\x01\\xff"'
xsw $P/clock monotonic
xsw $P/event-channel 99999999999
wait_match "$XS" state '^bad: event-channel: "99999999999"'
xsw $P/event-channel 5
xsw $P/version 3
wait_match "$XS" state '^bad: version: "3" is not 1 or 2'
xsw $P/version 1
xsw $P/state "readyy"
wait_match "$XS" state '^bad: state: "readyy"'
grep -q "domain $XS (xs): not traced: ring/0/pages" "$DLOG" || fail "refusal not logged"
# a legacy ref list that is garbage
"$SIMXEN" --dir "$SIM" xs-rm $P || fail "xs-rm"
xsw /local/domain/$XS/data/mprof/ring-ref "1,2,,x"
wait_match "$XS" state '^bad: data/mprof/ring-ref'

note "xenstore garbage refused"
# hostile ring contents, a storm and a flood, next to more good guests
BAD=$(guest scribble -- "$HOSTILE" --rings 2 --pages 16 scribble)
STORM_T0=$SECONDS
STORM=$(guest storm -- "$HOSTILE" --rings 1 --pages 64 storm 3000)
FLOOD=$(guest flood -- "$HOSTILE" --rings 2 --pages 64 flood)
GOOD2=$(guest good2 -- "$HOSTILE" --rings 4 --pages 64 count 10000)
GOOD3=$(guest good3 -- "$HOSTILE" --rings 1 --pages 128 count 10000)
E1=$(json_events good1); E2=$(json_events good2); E3=$(json_events good3)
ES=$(json_events storm)
wait_field "$GOOD1" events "$E1"
wait_field "$GOOD2" events "$E2" 30
wait_field "$GOOD3" events "$E3" 30
wait_field "$STORM" events "$ES"
note "bystanders counted exactly"
wait_match "$BAD" corrupt '^[1-9]'
[ "$(field "$BAD" state)" = running ] || fail "scribbling guest: state $(field "$BAD" state)"
# the storm is held off: past 30 wake-ups per 200 ms the port stays masked
sleep 1
snap
W=$(field "$STORM" wakeups); R=$(field "$STORM" ratelimited)
note "storm: $W wake-ups served, $R held off"
[ "$R" -gt 0 ] || fail "storm not rate-limited"
# The limiter holds off wake-ups that find nothing new: at most 30 of those per 200 ms
# period since the guest started (+1 s for rounding), plus those that found data, at
# most one per event it wrote (a slow, e.g. sanitizer, build finds data more often).
LIMIT=$(( 30 * 5 * (SECONDS - STORM_T0 + 1) + ES ))
[ "$W" -le "$LIMIT" ] || fail "storm: $W wake-ups served, limit $LIMIT"
# the flood is read (with losses: it outruns anyone) and counted
F1=$(field "$FLOOD" events)
[ "$F1" -gt 0 ] || fail "flood not read"
sleep 1
snap
[ "$(field "$FLOOD" events)" -gt "$F1" ] || fail "flood reading stalled"
# bystanders exact, nothing lost or corrupt
for d in $GOOD1 $GOOD2 $GOOD3 $STORM; do
	[ "$(field $d lost)" = 0 ] && [ "$(field $d corrupt)" = 0 ] || fail "domain $d: loss or corruption"
done
[ "$(field "$GOOD1" events)" = "$E1" ] && [ "$(field "$GOOD2" events)" = "$E2" ] &&
	[ "$(field "$GOOD3" events)" = "$E3" ] || fail "bystander counts moved"
# the daemon still answers promptly while the flood and the storm go on (relative to
# the same machine's answer before them: the test machine may be shared)
LAT=$(time_snap)
note "statistics answered in $LAT ms under flood and storm"
[ "$LAT" -lt $(( 5 * BASE + 2000 )) ] || fail "daemon slow to answer under load: $LAT ms"

alive
"$SIMXEN" --dir "$SIM" destroy "$FLOOD" >/dev/null
"$SIMXEN" --dir "$SIM" destroy "$STORM" >/dev/null
"$SIMXEN" --dir "$SIM" destroy "$BAD" >/dev/null
wait_field "$FLOOD" state destroyed
daemon_stop
echo "ok: hostile guests"
