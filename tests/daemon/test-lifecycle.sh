#!/bin/bash
# A guest appears and its events are counted exactly (decoded, in the statistics and
# on the stream); destroyed and crashed guests are cleaned up (unmapped, unbound,
# DomainDown, last statistics kept); a guest that re-announces with fresh rings is
# remapped; SIGTERM drains and says goodbye.
. "$MTRACE_SRC/tests/rig.sh"

sim_start
daemon_start
"$MTRACED_PROBE" -s "$SOCK" events 60 >"$T/stream" 2>&1 &
PROBE_PID=$!
PIDS+=("$PROBE_PID")
sleep 0.3

D1=$(guest one -- "$HOSTILE" --rings 1 --pages 64 count 5000)
D2=$(guest two -- "$HOSTILE" --rings 4 --pages 16 count 6000)
D3=$(guest three --preserve-crash -- "$HOSTILE" --rings 2 --pages 64 count 7000)
E1=$(json_events one); E2=$(json_events two); E3=$(json_events three)
note "guests $D1 $D2 $D3 wrote $E1 $E2 $E3 events"
wait_field "$D1" events "$E1"
wait_field "$D2" events "$E2"
wait_field "$D3" events "$E3"
for d in $D1 $D2 $D3; do
	[ "$(field $d lost)" = 0 ] && [ "$(field $d corrupt)" = 0 ] || fail "domain $d: loss or corruption"
	[ "$(field $d state)" = running ] && [ "$(field $d alive)" = 1 ] || fail "domain $d not running"
done
[ "$(field "$D2" rings)" = 4 ] || fail "domain $D2: rings $(field "$D2" rings)"
[ "$(field "$D1" total)" = 5001 ] || fail "domain $D1: threads_total $(field "$D1" total)"
MAPS=$(grant_maps)
[ "$MAPS" -gt 0 ] || fail "no grant mappings while guests are traced"

# destroy: final drain, unmap, unbind, DomainDown, statistics kept
"$SIMXEN" --dir "$SIM" destroy "$D1" || fail "destroy"
wait_field "$D1" state destroyed
[ "$(field "$D1" alive)" = 0 ] && [ "$(field "$D1" events)" = "$E1" ] || fail "domain $D1 lost its statistics"
# crash (domain kept as crashed by the toolstack)
"$SIMXEN" --dir "$SIM" crash "$D3" || fail "crash"
wait_field "$D3" state crashed
[ "$(field "$D3" events)" = "$E3" ] || fail "domain $D3 lost its statistics"
[ "$(field "$D2" state)" = running ] && [ "$(field "$D2" events)" = "$E2" ] || fail "bystander $D2 disturbed"
[ "$(grant_maps)" -lt "$MAPS" ] || fail "dead guests still mapped"

# re-announce: the guest withdraws and announces fresh rings
D4=$(guest four -- "$HOSTILE" --rings 2 --pages 64 reopen 3000 4000)
E4=$(json_events four)
wait_field "$D4" events "$E4" 15
[ "$(field "$D4" state)" = running ] || fail "domain $D4 not running after re-announce"
grep -q "domain $D4 (four): withdrawn" "$DLOG" || fail "withdrawal not logged"
[ "$(grep -c "domain $D4 (four): traced" "$DLOG")" = 2 ] || fail "domain $D4 not remapped"

# only domain two and four remain mapped: 2 + 4 rings x (header + data)
"$SIMXEN" --dir "$SIM" destroy "$D2" || fail "destroy"
"$SIMXEN" --dir "$SIM" destroy "$D4" || fail "destroy"
wait_field "$D2" state destroyed
wait_field "$D4" state destroyed
[ "$(grant_maps)" = 0 ] || fail "$(grant_maps) grant mappings left after every guest died"
grep -q "unbind" "$DLOG" && fail "an unbind failed: $(grep unbind "$DLOG")"

# SIGTERM: the stream client gets Goodbye
daemon_stop
wait "$PROBE_PID"
grep -q "^goodbye daemon stopping" "$T/stream" || fail "no Goodbye: $(cat "$T/stream")"
for d in $D1 $D2 $D3; do
	grep -q "^up $d " "$T/stream" || fail "no DomainUp for $d"
done
grep -q "^down $D1 destroyed" "$T/stream" || fail "no DomainDown for $D1"
grep -q "^down $D3 crashed" "$T/stream" || fail "no DomainDown for $D3"
grep -q "^down $D4 withdrawn" "$T/stream" || fail "no DomainDown (withdrawn) for $D4"
# the stream carried exactly what the guests wrote
for pair in "$D1:$E1" "$D2:$E2" "$D3:$E3" "$D4:$E4"; do
	d=${pair%%:*}; e=${pair##*:}
	got=$(sed -n "s/^count $d //p" "$T/stream")
	[ "$got" = "$e" ] || fail "domain $d: $got events streamed, $e written"
done
echo "ok: lifecycle"
