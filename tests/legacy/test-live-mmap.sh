#!/bin/bash
# A legacy guest that keeps writing while polled, without Xen: mtrace-mprof-guest writes
# its buffer through a MAP_SHARED file (mirage-profile's Unix mode) while mprof-poll maps
# it and polls it with daemon/mprof.c.  Bursts overwrite whole packets between polls.
# check_live.py: no duplicate, no corrupt event, the loss counter equals the packets
# that never arrived.
# Usage: test-live-mmap.sh GUEST MPROF-POLL CHECK_LIVE.PY
set -eu
guest=$1 poll=$2 check=$3
dir=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait; rm -rf "$dir"; }
trap cleanup EXIT

"$guest" --live --mmap "$dir/buf" --pages 4 --rate 20000 --count 40000 \
	--burst-every 8000 --burst 3000 --start-delay 300 --summary "$dir/summary.json" \
	2>"$dir/guest.err" &
pids+=($!)
# the guest creates the file and sizes it before it writes anything
for _ in $(seq 100); do
	[ "$(stat -c %s "$dir/buf" 2>/dev/null || echo 0)" = 16384 ] && break
	sleep 0.05
done
timeout 50 "$poll" -i 10 -e -u "$dir/summary.json" "$dir/buf" >"$dir/events.jsonl"
python3 "$check" "$dir/summary.json" "$dir/events.jsonl"
