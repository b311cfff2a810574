#!/bin/bash
# A legacy guest that keeps writing while polled, without Xen: mtrace-mprof-guest writes
# its buffer through a MAP_SHARED file (mirage-profile's Unix mode) while mprof-poll maps
# it and polls it with daemon/mprof.c.  Bursts overwrite whole packets between polls.
# check_live.py: no duplicate, no corrupt event, the loss counter equals the packets
# that never arrived.
. "$MTRACE_SRC/tests/rig.sh"

"$MPROF_GUEST" --live --mmap "$T/buf" --pages 4 --rate 20000 --count 40000 \
	--burst-every 8000 --burst 3000 --start-delay 300 --summary "$T/summary.json" \
	2>"$T/guest.err" &
PIDS+=($!)
# the guest creates the file and sizes it before it writes anything
sized() { [ "$(stat -c %s "$T/buf" 2>/dev/null || echo 0)" = 16384 ]; }
wait_until 5 sized
timeout 50 "$MPROF_POLL" -i 10 -e -u "$T/summary.json" "$T/buf" >"$T/events.jsonl" ||
	fail "mprof-poll exited $?"
python3 "$HERE/check_live.py" "$T/summary.json" "$T/events.jsonl" || fail "check_live"
