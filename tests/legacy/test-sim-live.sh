#!/bin/bash
# A simulated legacy guest that keeps writing while mtraced polls it (20 ms), with
# bursts that overwrite whole packets between polls: at the client no duplicate and no
# corrupt event, the guest's last event arrives, and the daemon's loss estimate matches
# the events of the packets overwritten unread (check_live.py --cat).
. "$MTRACE_SRC/tests/rig.sh"

sim_start
daemon_start --set mprof_poll_ms=20
"$CAT" -s "$SOCK" -f json --stats 200 >"$T/cat.jsonl" 2>"$T/cat.err" &
PIDS+=($!)
sleep 0.3
guest mirage-live -- "$MPROF_GUEST" --live --pages 4 --rate 20000 --count 40000 \
	--burst-every 8000 --burst 3000 --start-delay 500 --summary "$T/summary.json" >/dev/null
wait_until 40 test -f "$T/summary.json" || fail "the guest did not finish"
last() { grep -q "\"ts\":$((1000000000 + 39999 * 1000))," "$T/cat.jsonl"; }
wait_until 40 last	# check_live.py says what is missing
sleep 0.5
python3 "$HERE/check_live.py" "$T/summary.json" "$T/cat.jsonl" --cat || fail "check_live"
