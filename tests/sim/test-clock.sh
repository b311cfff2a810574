#!/bin/bash
# The real-Xen clock phase (tests/xen/clock-tests.sh) on the simulated Xen, judged by the
# same tests/xen/check_clock.py: two guests on the monotonic and the TSC clock announce
# clock-sync (here Xen time IS CLOCK_MONOTONIC: exact, width 0), signal each other
# (mtrace-load --pingpong) and a dom0 witness (xen-clock).  Then the checker must also
# catch a timeline that is wrong: one guest's announcement moved 2 ms.
. "$MTRACE_SRC/tests/rig.sh"
: "${XEN_CLOCK:?}"
N_AB=300 N_W=100
A=$T/clock.account
xs() { "$SIMXEN" --dir "$SIM" "$@"; }
sample() { echo "d0 $1 $("$XEN_CLOCK" sample 1)" >> "$A"; }

sim_start
daemon_start
: > "$A"
sample before
CA=$(guest CA -- "$LOAD" --clock monotonic --pages 64 --pingpong ab,$N_AB --pingpong w,$N_W \
	--pingpong-timeout 30 --linger 20 --hold)
CB=$(guest CB -- "$LOAD" --clock tsc --pages 64 --pingpong ab,$N_AB --pingpong w,$N_W \
	--pingpong-timeout 30 --linger 20 --hold)
for d in $CA $CB; do
	wait_until 20 xs xs-read /local/domain/$d/data/mtrace/clock-sync >/dev/null ||
		fail "dom$d announced no clock-sync"
	echo "clock $d $(xs xs-read /local/domain/$d/data/mtrace/clock)" >> "$A"
	echo "sync $d $(xs xs-read /local/domain/$d/data/mtrace/clock-sync)" >> "$A"
done
sample seen
echo "domains $CA $CB" >> "$A"
echo "counts $N_AB $N_W" >> "$A"
# every event from here on; the rings' RING_START went before this client came
want=$((2 * (2 * N_AB + 2 * N_W)))
"$CAT" -s "$SOCK" -f json --summary -D $CA -D $CB -n $want --time 60 > "$T/clock.json" 2> "$T/cat.err" &
CATP=$!
PIDS+=($CATP)
# subscribed once mtraced's log names the client
wait_until 20 grep -q mtrace-cat "$DLOG" || fail "mtrace-cat never subscribed: $(cat "$T/cat.err")"
xs xs-write /local/domain/$CA/data/mtrace-pingpong/ab/role "offer $CB"
wait_until 20 xs xs-read /local/domain/$CA/data/mtrace-pingpong/ab/port >/dev/null || fail "no port"
xs xs-write /local/domain/$CB/data/mtrace-pingpong/ab/role \
	"connect $CA $(xs xs-read /local/domain/$CA/data/mtrace-pingpong/ab/port)"
# each witness keeps its port bound (60 s, or until the test ends) so that mtraced, however
# slow (the sanitizer build), still finds both ends when it asks Xen about the guest's port
for d in $CA $CB; do
	"$XEN_CLOCK" witness $d $N_W 30 60 > "$T/w.$d" 2>&1 &
	PIDS+=($!)
done
for d in $CA $CB; do
	wait_until 20 grep -q '^port ' "$T/w.$d" || fail "witness for dom$d: $(cat "$T/w.$d")"
	xs xs-write /local/domain/$d/data/mtrace-pingpong/w/role "connect 0 $(sed -n 's/^port //p' "$T/w.$d")"
done
arrived() { [ "$(grep -c '"op":"evtchn_' "$T/clock.json")" -ge $want ]; }
wait_until 60 arrived ||
	fail "$(grep -c '"op":"evtchn_' "$T/clock.json") evtchn events of $want arrived"
for d in $CA $CB; do
	log=$T/C$([ $d = $CA ] && echo A || echo B).log
	wait_until 20 grep -q '"per_op"' "$log" || fail "dom$d printed no summary: $(tail -3 "$log")"
	wait_until 20 grep -q '^done' "$T/w.$d" || fail "witness for dom$d: $(tail -3 "$T/w.$d")"
	sed "s/^/w $d /" "$T/w.$d" >> "$A"
	echo "sync $d $(xs xs-read /local/domain/$d/data/mtrace/clock-sync)" >> "$A"
	grep -o '"per_op": {[^}]*}' "$log" | head -1 | sed "s/^/summary $d /" >> "$A"
done
sample after
# mtrace-cat ends after the last of them (-n), its summary written
wait $CATP || fail "mtrace-cat: $(cat "$T/cat.err")"
awk -f "$MTRACE_SRC/tests/xen/clock-reduce.awk" "$T/clock.json" >> "$A"
grep -o '"evtchn_pairs":{[^}]*}' "$T/cat.err" | sed 's/^/catsum /' >> "$A"

out=$($PYTHON -B "$MTRACE_SRC/tests/xen/check_clock.py" "$A") ||
	fail "the checker refused the simulated run: $out"
for c in timeline_within_1ms_of_dom0_dom$CA mtraced_maps_dom$CB mtraced_send_before_receive \
	mtraced_pairs_are_the_exchange mtraced_timeline_within_1ms_of_dom0_dom$CB \
	mtraced_map_agrees_with_dom0_sample_dom$CA; do
	echo "$out" | grep -q "^PASS $c " || fail "no check $c: $out"
done
# exact identities on the simulated Xen
for d in $CA $CB; do
	read -r seq ring xen width < <(xs xs-read /local/domain/$d/data/mtrace/clock-sync)
	[ "$ring" = "$xen" ] && [ "$width" = 0 ] && [ "$seq" = 1 ] ||
		fail "dom$d clock-sync '$seq $ring $xen $width': not the sim's exact identity"
done
note "$(echo "$out" | grep -E 'send_before|timeline' | tr '\n' ' ')"
# mtraced's maps of CA moved (every host time of CA, the pairs judged again as mtrace-cat
# would): 2 ms later, its witness and the cross-check refuse it; 1 us past the pairs'
# margin, a pair is violated
mtraced_moved() { # ns check...
	local by=$1 c
	shift
	$PYTHON -B "$MTRACE_SRC/tests/xen/check_clock.py" --shift-mtraced $CA $by "$A" > "$A.shifted"
	out=$($PYTHON -B "$MTRACE_SRC/tests/xen/check_clock.py" "$A.shifted") &&
		fail "mtraced's maps moved $by ns passed"
	for c; do
		echo "$out" | grep -q "^FAIL $c" || fail "mtraced's maps moved $by ns: $c not refused: $out"
	done
}
mtraced_moved 2000000 mtraced_timeline_within_1ms_of_dom0_dom$CA mtraced_map_agrees_with_dom0_sample_dom$CA
late=$($PYTHON -B "$MTRACE_SRC/tests/xen/check_clock.py" --margin $CA "$A" | cut -d' ' -f2)
[ -n "$late" ] || fail "no margin for dom$CA's pairs"
mtraced_moved $((late + 1000)) mtraced_send_before_receive
# the checker can fail: CA's announcement 2 ms off puts its timeline 2 ms off dom0's
shift_sync() { # domid ns: the account with that guest's announced Xen time moved
	$PYTHON -c 'import sys
d, by = sys.argv[1], int(sys.argv[2])
for line in open(sys.argv[3]):
    f = line.split()
    if f[:2] == ["sync", d]:
        f[4] = str(int(f[4]) + by)
        line = " ".join(f) + "\n"
    sys.stdout.write(line)' "$1" "$2" "$A" > "$A.bad"
}
shift_sync $CA 2000000
if out=$($PYTHON -B "$MTRACE_SRC/tests/xen/check_clock.py" "$A.bad"); then
	fail "a timeline 2 ms off passed: $out"
fi
echo "$out" | grep -q "FAIL timeline_within_1ms_of_dom0_dom$CA" ||
	fail "a timeline 2 ms off was not caught by the witness: $out"
# and CB's 5 ms early puts its sends before... after the receives they caused
shift_sync $CB -5000000
out=$($PYTHON -B "$MTRACE_SRC/tests/xen/check_clock.py" "$A.bad") && fail "CB 5 ms early passed"
echo "$out" | grep -q "FAIL send_before_receive_on_host_timeline" ||
	fail "a receive before its send was not caught: $out"
pass "clock-sync announced, $N_AB round trips between guests and $N_W with dom0 judged as on real Xen"
