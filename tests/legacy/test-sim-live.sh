#!/bin/bash
# A simulated legacy guest that keeps writing while mtraced polls it (20 ms), with
# bursts that overwrite whole packets between polls: at the client no duplicate and no
# corrupt event, the guest's last event arrives, and the daemon's loss estimate matches
# the events of the packets overwritten unread (check_live.py --cat).
# Usage: test-sim-live.sh SIMXEN MTRACED CAT GUEST CHECK_LIVE.PY
SIMXEN=$1 MTRACED=$2 CAT=$3 GUEST=$4 CHECK=$5
. "$(dirname "$0")/lib-sim.sh"

start_chain 20
"$SIMXEN" -d "$dir/xen" create --name mirage-live --log "$dir/guest.log" -- \
	"$GUEST" --live --pages 4 --rate 20000 --count 40000 --burst-every 8000 --burst 3000 \
	--start-delay 500 --summary "$dir/summary.json" >/dev/null || fail "create"
wait_for test -f "$dir/summary.json" || fail "the guest did not finish"
last() { grep -q "\"ts\":$((1000000000 + 39999 * 1000))," "$dir/cat.jsonl"; }
wait_for last || true	# check_live.py says what is missing
sleep 0.5
python3 "$CHECK" "$dir/summary.json" "$dir/cat.jsonl" --cat || fail "check_live"
