#!/bin/bash
# mtrace-ship stopped (SIGTERM) with the guest's events sent to it by mtraced but not yet
# published: it ships what mtraced had already sent it before it exits, so what the
# stream holds equals the live stream.  To be sure it is behind, the shipper is frozen
# (SIGSTOP) while the guest writes, and gets SIGTERM before SIGCONT.
. "$(dirname "$0")/../rig.sh"
. "$HERE/lib.sh"

nats_start
host_up h1
live_reader h1
ship h1 --spool "$T/h1/spool"
host_clients h1 2
kill -STOP "${SHIP_PID[h1]}"
# 50 000 events (about 1 MB, within mtraced's queue for a client) into a ring that holds
# them all
host_guest h1 load --domid 11 -- "$LOAD" --wait-reader 10 --linger 10 \
	--summary "$T/h1/load.json" -n 50000 -p 512 --rate 200000 >/dev/null
host_idle h1
wait_growing "the live reader's DomainDown of the guest" 20 180 "$T/h1.live.json" \
	grep -q '"type":"domain_down","domid":11,' "$T/h1.live.json"
kill -TERM "${SHIP_PID[h1]}"
kill -CONT "${SHIP_PID[h1]}"
wait_pid "${SHIP_PID[h1]}" 20 || fail "mtrace-ship exited with an error"
note "stopped: $(grep 'exit:' "$T/h1.ship.log")"
kill -INT "$LIVE"
wait_pid "$LIVE" 10 || fail "live mtrace-cat: $(cat "$T/h1.live.err")"
"$CAT" --nats "$NATS_URL" --host h1 -f json >"$T/h1.nats.json" 2>"$T/h1.nats.err" ||
	fail "mtrace-cat --nats: $(cat "$T/h1.nats.err")"
n=$("$PYTHON" "$HERE/same_events.py" "$T/h1.live.json" "$T/h1.nats.json") ||
	fail "the stream differs from the live stream: $n"
grep -q '"type":"domain_down","domid":11,' "$T/h1.nats.json" ||
	fail "the stream has not the guest's DomainDown"
pass "stopped right after the guest: $n events in the stream, as in the live stream"
