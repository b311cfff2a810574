#!/bin/bash
# Chrome JSON as Perfetto imports it (check_chrome.py models its JSON importer and
# slice tracker): no slice left "Did not end", no dropped end, no stacked thread
# slices, flows bound where they happen, timestamps at the stream's ns, on
#  1. the shipped 2014 MirageOS trace replayed, alone;
#  2. an mtrace-load capture (two rings, thread ids reused across them);
#  3. a capture stopped mid-run (SIGINT while a guest writes): the threads still
#     pending end at the capture's end, marked did_not_end, and only those.
. "$MTRACE_SRC/tests/rig.sh"

sim_start
daemon_start
# One client per capture writes Chrome JSON live and a recording of what it received
# (-w); the JSON stream to compare with is read back from that recording.
live() {	# name args...: a live Chrome client, its pid in LASTPID
	local n=$1
	shift
	"$CAT" -s "$SOCK" -f chrome -w "$T/$n.mtr" -O "$T/$n-chrome.json" "$@" 2>"$T/$n.err" &
	LASTPID=$!
	PIDS+=($!)
}
check() {	# name: the Chrome file against the JSON stream of the same capture
	"$CAT" -i "$T/$1.mtr" -f json -O "$T/$1.jsonl" || fail "$1: -i -f json"
	grep -v "mtraced said goodbye" "$T/$1.err" && fail "$1: unexpected messages"
	"$PYTHON" "$HERE/check_chrome.py" "$T/$1-chrome.json" "$T/$1.jsonl" >"$T/$1.check" ||
		{ head -20 "$T/$1.check"; fail "$1: Perfetto's rules"; }
	tail -1 "$T/$1.check"
}

# 1. the 2014 trace, alone (one guest at a time: the clients need no filter); the
# client exits after its 3916 events (the trace's 3915 and ring_start)
live mirage -n 3916
MC=$LASTPID
sleep 0.3
guest mirage --domid 6 -- "$REPLAY" --speed 10 --hold "$MTRACE_SRC/data/mirage/log-x86.sexp" \
	>/dev/null
wait_pid "$MC" 30 || fail "the mirage client exited $?"
"$SIMXEN" --dir "$SIM" destroy 6 >/dev/null || fail "destroy mirage"
check mirage
pass "the 2014 trace: 0 unfinished slices in Perfetto's model"

# 2. mtrace-load, two rings of 6000 events, to its end; rings that hold them all (256
# pages, 32,768 records each), so that mtraced held off the CPU for a while on a busy
# machine loses none and the client gets its 12000 (16 pages held 70 ms of them)
live load -n 12000
LC=$LASTPID
sleep 0.3
load_guest g1 5 "$T/g1.json" --rings 2 --pages 256 -n 6000 --rate 30000 --fail 20 --labels 8 \
	--counters 3
wait_pid "$LC" 30 || fail "the load client exited $?"
wait_guests "$T/g1.json"
check load
pass "mtrace-load (two rings): 0 unfinished, no stacked thread slices"

# 3. stopped mid-run: the client is interrupted while the guest still writes
live stop
SC=$LASTPID
sleep 0.3
load_guest g2 7 "$T/g2.json" --duration 60 --rate 5000
# (the Chrome JSON itself is written at the end, when its base is known: the recording
# beside it shows how far the capture is)
grown() { [ "$(stat -c %s "$T/stop.mtr" 2>/dev/null || echo 0)" -gt 60000 ]; }
wait_until 30 grown || fail "g2 wrote too little"
kill -INT "$SC"
wait_pid "$SC" 10 || fail "the client exited $? on SIGINT"
[ -s "$T/g2.json" ] && fail "the guest ended before the client stopped: not mid-run"
check stop
grep -q '"perfetto did_not_end": [1-9]' "$T/stop.check" ||
	fail "stopped mid-run, yet no thread marked did_not_end"
"$SIMXEN" --dir "$SIM" destroy 7 >/dev/null
pass "stopped mid-run: 0 unfinished; the pending threads end at the capture's end"
daemon_stop
