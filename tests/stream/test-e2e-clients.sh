#!/bin/bash
# The real mtraced on the simulated Xen, two guests running mtrace-load.
#  1. one client receives exactly what the guests wrote;
#  2. sixteen clients with different filters each receive exactly what their filter
#     selects, while a stalled client (never reads for 7 s) overflows its own queue, and
#     malformed, oversized, truncated and mid-frame clients come and go: the sixteen lose
#     nothing, and the stalled one is told how many events it lost.
. "$MTRACE_SRC/tests/rig.sh"

FILTERS=(
	""
	"-D 5"
	"-D g2"
	"-D 5 -D g2"
	"-o switch,read"
	"-o label --label label-1"
	"-D g1 -o label"
	"-o fails,counter,increase"
	"-o evtchn_send -D 7"
	"--no-events --stats 100"
	"-D 99"
	""
	"-o ring_start"
	"-f json -o creates"
	"-o gc,switch -D g1"
	"-o label --label label-"
)

start_clients() {	# count: the first COUNT filters
	filter_clients "${FILTERS[@]:0:$1}"
}

# 10 k events/s per ring, 1 MiB rings: the daemon would have to stall for seconds
# before a guest overwrote anything.  Queues of 1 MiB give a reading client ~3 s of
# slack even on a loaded machine; the stalled one sleeps through the whole 6 s run
# (~2 MB of stream) and must overflow.
LOADARGS=(--rings 2 -p 256 --rate 10000)

# --- 1 client ---------------------------------------------------------------------
sim_start
daemon_start --set drop_privileges=false --set client_queue_bytes=1048576
start_clients 1
sleep 0.3
load_guest g1 5 "$T/g1.json" "${LOADARGS[@]}" -n 10000 --seed 1
load_guest g2 7 "$T/g2.json" "${LOADARGS[@]}" -n 10000 --seed 2
wait_guests "$T/g1.json" "$T/g2.json"
kill -TERM "$DPID"
for p in "${CPIDS[@]}"; do wait_pid "$p" 20 || fail "mtrace-cat exited $?"; done
wait_pid "$DPID" 10 || fail "mtraced exited $?"
python3 "$HERE/client_counts.py" guests "$T" 1 g1="$T/g1.json" g2="$T/g2.json" || fail "1 client"
pass "1 client received exactly what the guests wrote"
"$SIMXEN" --dir "$SIM" stop >/dev/null 2>&1
rm -rf "$SIM" "$T"/g?.json "$SOCK"

# --- 16 clients, a stalled one, bad ones -----------------------------------------
sim_start
daemon_start --set drop_privileges=false --set client_queue_bytes=1048576
start_clients 16
"$PROBE" -s "$SOCK" -S -p 7 -T 30 >"$T/stall.out" &
STALL=$!
PIDS+=("$STALL")
sleep 0.5
load_guest g1 5 "$T/g1.json" "${LOADARGS[@]}" -n 60000 --seed 3
load_guest g2 7 "$T/g2.json" "${LOADARGS[@]}" -n 60000 --seed 4
sleep 0.3
# While events flow: malformed, oversized, truncated, gone mid-frame.
timeout 10 "$PROBE" -s "$SOCK" -x ffffffffffffffffffffff | grep -q '^error 1 ' || fail "malformed"
timeout 10 "$PROBE" -s "$SOCK" -x 80804000 | grep -q '^error 2 ' || fail "oversized"
timeout 10 "$PROBE" -s "$SOCK" -x 030a0508 | grep -q '^error 1 ' || fail "truncated"
timeout 10 "$PROBE" -s "$SOCK" -S -x 0a0a01 -c >/dev/null || fail "mid-frame"
wait_guests "$T/g1.json" "$T/g2.json"
# The stalled client wakes after 7 s and drains; then the daemon stops.
for _ in $(seq 200); do grep -q '^loss 0 0 0' "$T/stall.out" 2>/dev/null && break; sleep 0.1; done
sleep 1
kill -TERM "$DPID"
for p in "${CPIDS[@]}"; do wait_pid "$p" 20 || fail "mtrace-cat exited $?"; done
wait_pid "$STALL" 20
wait_pid "$DPID" 10 || fail "mtraced exited $?"
python3 "$HERE/client_counts.py" guests "$T" 16 g1="$T/g1.json" g2="$T/g2.json" || fail "16 clients"
pass "16 clients received exactly what their filters select"

total=$(python3 -c 'import json,sys; print(sum(json.load(open(f))["events"] for f in sys.argv[1:]))' \
	"$T/g1.json" "$T/g2.json")
cat "$T/stall.out"
grep -q '^loss 0 0 0 [1-9]' "$T/stall.out" || fail "stalled client was not told of its loss"
read -r got lost < <(sed -n 's/^summary events=\([0-9]*\) dropped=\([0-9]*\)/\1 \2/p' "$T/stall.out")
[ "$lost" -gt 0 ] || fail "the stalled client lost nothing: it was not stalled"
[ $((got + lost)) -eq "$total" ] || fail "stalled: got $got + told lost $lost != $total"
pass "stalled client got $got and was told it lost $lost of $total"
