#!/bin/bash
# A stalled client (subscribes, then does not read) loses its own events only: the
# others' counts are exact and they keep pace; when the stalled one finally reads it
# is told how many it lost, and what it got plus what it was told it lost is all.
. "$MTRACE_SRC/tests/rig.sh"

N=300000
# 1 MiB queues, 75 k events/s (~0.8 MB/s) for 4 s: the stalled client overflows after
# ~1.5 s; the reading ones have a second of slack even on a loaded machine.
start_harness -N $N -r 75000 -D 2 -R 2 -w 4 -q 1048576 -L 500

"$PROBE" -s "$SOCK" -S -I 100 -p 5 -T 15 >"$T/stall.out" &
STALL=$!
PIDS+=("$STALL")
GOOD=()
for i in 0 1 2; do
	"$CAT" -s "$SOCK" -f count --summary >/dev/null 2>"$T/good$i.sum" &
	GOOD+=($!)
	PIDS+=($!)
done
# The harness starts generating once the 4 are in; it ends 2.5 s after the last event.
for p in "${GOOD[@]}"; do wait_pid "$p" 30 || fail "good client exited $?"; done
wait_pid "$STALL" 30 || fail "stalled client exited $?"
wait_pid "$HPID" 10

for i in 0 1 2; do
	sum=$(tail -1 "$T/good$i.sum")
	python3 -c '
import json, sys
s = json.loads(sys.argv[1])
sys.exit(0 if s["events"] == int(sys.argv[2]) and s["dropped_for_client"] == 0 and s["goodbye"] else 1)' \
		"$sum" $N || fail "good client $i: $sum"
done
pass "3 reading clients got all $N events"

grep -v '^stats' "$T/stall.out"
grep -q '^loss 0 0 0 [1-9]' "$T/stall.out" || fail "stalled client was not told of its loss"
grep -q '^goodbye' "$T/stall.out" || fail "stalled client got no goodbye"
read -r got lost < <(sed -n 's/^summary events=\([0-9]*\) dropped=\([0-9]*\)/\1 \2/p' "$T/stall.out")
[ "$lost" -gt 0 ] || fail "stalled client lost nothing: the test did not stall it"
[ $((got + lost)) -eq $N ] || fail "stalled: got $got + told lost $lost != $N"
pass "stalled client got $got and was told it lost $lost (sum $N)"

# Its statistics were coalesced while it was congested: a 100 ms timer over the ~7 s run
# would have queued ~70; the first snapshot after the loss notice carries the loss.
nstats=$(grep -c '^stats' "$T/stall.out")
[ "$nstats" -ge 2 ] && [ "$nstats" -lt 50 ] || fail "stalled client got $nstats statistics"
after=$(sed -n '/^loss 0 0 0/,$p' "$T/stall.out" | grep -m1 '^stats' | cut -d' ' -f2)
[ "$after" = "$lost" ] || fail "statistics after the loss notice say dropped=$after, not $lost"
pass "statistics coalesced ($nstats received) and report the loss"
