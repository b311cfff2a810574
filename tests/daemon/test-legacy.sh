#!/bin/bash
# Discovery of mirage-profile guests (data/mprof/ring-ref): found beside ring guests,
# polled and marked legacy; a guest announcing both is read through data/mtrace; a
# legacy guest's death unmaps its buffer; dead guests' statistics are kept dead_keep_s,
# then forgotten.  (Exact legacy decoding: tests/legacy.)
. "$MTRACE_SRC/tests/rig.sh"
: "${MPROF_GUEST:?}"

sim_start
daemon_start --set mprof_poll_ms=50 --set dead_keep_s=2
L=$(guest legacy -- "$MPROF_GUEST" --live --pages 16 --rate 2000)
R=$(guest ring -- "$HOSTILE" --rings 1 --pages 64 count 2000)
ER=$(json_events ring)
wait_field "$L" legacy 1
wait_field "$L" state running
wait_match "$L" events '^[1-9]'
wait_field "$R" events "$ER"
[ "$(field "$R" legacy)" = 0 ] || fail "ring guest marked legacy"
# the ring guest also offers a legacy buffer: data/mtrace wins, nothing is remapped
"$SIMXEN" --dir "$SIM" xs-write "/local/domain/$R/data/mprof/ring-ref" "1,2,3" || fail "xs-write"
sleep 0.5
snap
[ "$(field "$R" legacy)" = 0 ] && [ "$(field "$R" state)" = running ] || fail "both: not read through data/mtrace"
[ "$(grep -c "domain $R (ring): traced" "$DLOG")" = 1 ] || fail "ring guest remapped"
# legacy events keep coming across polls (their exact decoding is tests/legacy's)
E1=$(field "$L" events)
sleep 1
snap
[ "$(field "$L" events)" -gt "$E1" ] || fail "legacy guest not polled"
"$SIMXEN" --dir "$SIM" destroy "$R" >/dev/null
"$SIMXEN" --dir "$SIM" destroy "$L" >/dev/null
wait_field "$L" state destroyed
wait_field "$R" state destroyed
[ "$(grant_maps)" = 0 ] || fail "$(grant_maps) grant mappings left"
for _ in $(seq 50); do
	snap
	[ -z "$(field "$L" state)" ] && [ -z "$(field "$R" state)" ] && break
	sleep 0.2
done
[ -z "$(field "$L" state)" ] && [ -z "$(field "$R" state)" ] || fail "dead guests not forgotten after dead_keep_s"
daemon_stop
echo "ok: legacy discovery"
