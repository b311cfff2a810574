#!/bin/bash
# One capture, every format: the real mtraced on the simulated Xen serves the replayed
# 2014 MirageOS trace, an mtrace-load guest (two rings; labels, counters, fails, GC,
# event-channel sends; one ring and two) and a guest of hostile strings, to live clients in every format
# at once.  Then:
#  1. the recording (-w) read back with -i (from the file and from a pipe) prints
#     exactly what the live -f json client printed: every event, statistics message and
#     domain notice, byte for byte; -f text likewise; a second recording (-f proto, a
#     client of its own) holds the same events and domain notices;
#  2. the -i filters (-l, -d with -o) give what live clients with those filters got,
#     and a filtered recording (-i -f proto) reads back to the same;
#  3. CTF, live and from the recording (stream files identical): babeltrace2 opens it
#     with nothing on stderr and counts the same events; python3-bt2 and a reader
#     written to mirage-trace-viewer's loader decode the same events, per stream, as
#     the JSON stream (times, ops, threads, fields, strings, thread types);
#  4. Chrome JSON, live and from the recording (identical): the structural checker
#     passes and its counts equal the JSON stream's;
#  5. hostile strings: every JSON line parses, the text has no control bytes.
. "$MTRACE_SRC/tests/rig.sh"
"$PYTHON" -c 'import bt2' 2>/dev/null || fail "$PYTHON has no bt2 (python3-bt2)"
command -v babeltrace2 >/dev/null || fail "babeltrace2 is not installed"

sim_start
daemon_start
CPIDS=()
live() {	# name args...
	local n=$1
	shift
	"$CAT" -s "$SOCK" "$@" 2>"$T/$n.err" &
	CPIDS+=($!)
	PIDS+=($!)
}
live json -f json --stats 200 --top 5 --label-stats -w "$T/rec.mtr" -O "$T/live.jsonl"
live proto -f proto --stats 300 -O "$T/rec2.mtr"
live text -f text -O "$T/live.txt"
# --label follows labels in stream order; mtrace-load's rings reuse each other's thread ids,
# which only mtraced sees interleaved as it applied them: one ring for this one
live l1 -f json -D g1 --label label-1 -O "$T/live-l1.jsonl"
live dg1 -f json -D g1 -o label,fails,counter -O "$T/live-dg1.jsonl"
live chrome -f chrome -O "$T/live-chrome.json"
live ctf -f ctf -O "$T/live-ctf"
sleep 0.5

# rings that hold every event the guests write: a loaded machine (a fresh-machine run of
# ./check beside other builds) starved mtraced long enough for 64 KiB rings to overwrite
load_guest g1 5 "$T/g1.json" -n 15000 --rate 30000 --fail 20 --evtchn 5 -p 512
load_guest g2 8 "$T/g2.json" --rings 2 -n 8000 --rate 30000 --seed 2 --labels 8 --counters 4 -p 512
guest mirage --domid 6 -- "$REPLAY" --speed 10 --hold "$MTRACE_SRC/data/mirage/log-x86.sexp" \
	>/dev/null
guest 'str"ings' --domid 7 -- "$STRINGS_GUEST" >/dev/null
# the replay stays announced (--hold) until all of its 3915 events are through
for _ in $(seq 200); do
	[ "$(grep -c '"type":"event","domid":6,' "$T/live.jsonl")" -ge 3915 ] && break
	sleep 0.1
done
"$SIMXEN" --dir "$SIM" destroy 6 >/dev/null || fail "destroy mirage"
wait_guests "$T/g1.json" "$T/g2.json"
sleep 0.5	# the last statistics
daemon_stop
for p in "${CPIDS[@]}"; do wait_pid "$p" 20 || fail "a live mtrace-cat exited $?"; done
for f in "$T"/*.err; do
	grep -v "mtraced said goodbye" "$f" && fail "$(basename "$f"): unexpected messages"
done
events=$(grep -c '"type":"event"' "$T/live.jsonl")
stats=$(grep -c '"type":"stats"' "$T/live.jsonl")
[ "$events" -gt 20000 ] && [ "$stats" -gt 3 ] ||
	fail "only $events events, $stats stats; losses: $(grep -o '"type":"loss"[^}]*' "$T/live.jsonl" | head -5)"
for d in g1 mirage; do
	grep -q "\"type\":\"domain_up\",\"domid\":[0-9]*,\"name\":\"$d\"" "$T/live.jsonl" ||
		fail "no domain_up for $d"
done
grep -q '"type":"domain_down"' "$T/live.jsonl" || fail "no domain_down"

# 1. recordings
"$CAT" -i "$T/rec.mtr" -f json >"$T/back.jsonl" || fail "-i rec.mtr"
"$PYTHON" "$HERE/compare_jsonl.py" "$T/live.jsonl" "$T/back.jsonl" ||
	fail "-i differs from the live client"
cmp "$T/live.jsonl" "$T/back.jsonl" || fail "-i output is not byte for byte the live output"
"$CAT" -i - -f json <"$T/rec.mtr" | cmp - "$T/live.jsonl" || fail "-i - (a pipe) differs"
"$CAT" -i "$T/rec.mtr" -f proto | cmp - "$T/rec.mtr" || fail "an unfiltered copy differs"
# (the live text client asked for no statistics: leave the recording's out)
"$CAT" -i "$T/rec.mtr" -f text | grep -v -e '^# stats ' -e '^#  ' | cmp - "$T/live.txt" ||
	fail "-i -f text differs from live text"
"$CAT" -i "$T/rec2.mtr" -f json >"$T/back2.jsonl" || fail "-i rec2.mtr"
"$PYTHON" "$HERE/compare_jsonl.py" --no-stats "$T/live.jsonl" "$T/back2.jsonl" ||
	fail "the -f proto recording differs from the live client"
pass "recordings read back: $events events, $stats statistics, domain notices equal"

# 2. filters on a recording
grep -q '"domid":5,' "$T/live-l1.jsonl" || fail "the live -l client got nothing"
"$CAT" -i "$T/rec.mtr" -f json -D g1 --label label-1 >"$T/back-l1.jsonl"
"$PYTHON" "$HERE/compare_jsonl.py" --no-stats "$T/live-l1.jsonl" "$T/back-l1.jsonl" ||
	fail "-i --label label-1 differs from a live --label label-1"
"$CAT" -i "$T/rec.mtr" -f json -D g1 -o label,fails,counter --no-events >/dev/null ||
	fail "-i --no-events"
"$CAT" -i "$T/rec.mtr" -f json -D g1 -o label,fails,counter >"$T/back-dg1.jsonl"
"$PYTHON" "$HERE/compare_jsonl.py" --no-stats "$T/live-dg1.jsonl" "$T/back-dg1.jsonl" ||
	fail "-i -d g1 -o ... differs from the live client"
"$CAT" -i "$T/rec.mtr" -D g1 -o label,fails,counter -f proto -O "$T/sub.mtr"
"$CAT" -i "$T/sub.mtr" -f json >"$T/back-sub.jsonl"
"$PYTHON" "$HERE/compare_jsonl.py" --no-stats "$T/live-dg1.jsonl" "$T/back-sub.jsonl" ||
	fail "a filtered recording differs"
pass "filters on a recording select what live filters do (-l, -d -o, -f proto)"

# 3. CTF
"$CAT" -i "$T/rec.mtr" -f ctf -O "$T/back-ctf" || fail "-i -f ctf"
for f in "$T/live-ctf"/dom*; do
	cmp "$f" "$T/back-ctf/$(basename "$f")" || fail "CTF stream $(basename "$f") differs"
done
[ "$(ls "$T/live-ctf" | wc -l)" = "$(ls "$T/back-ctf" | wc -l)" ] || fail "CTF file lists differ"
babeltrace2 "$T/live-ctf" >"$T/bt.txt" 2>"$T/bt.stderr" || fail "babeltrace2 exited $?"
[ -s "$T/bt.stderr" ] && { head -20 "$T/bt.stderr"; fail "babeltrace2 wrote to stderr"; }
n=$(wc -l <"$T/bt.txt")
[ "$n" -eq "$events" ] || fail "babeltrace2 prints $n events, the JSON stream has $events"
"$PYTHON" "$HERE/check_ctf.py" bt2 "$T/live-ctf" "$T/live.jsonl" || fail "bt2 differs"
"$PYTHON" "$HERE/check_ctf.py" mtv "$T/live-ctf" "$T/live.jsonl" || fail "mtv layout differs"
grep -q 'domain_5 = "g1"' "$T/live-ctf/metadata" || fail "no domain name in the metadata"
pass "CTF: babeltrace2 reads $n events silently; bt2 and the mtv layout equal the JSON"

# 4. Chrome
"$CAT" -i "$T/rec.mtr" -f chrome | cmp - "$T/live-chrome.json" || fail "-i -f chrome differs"
"$PYTHON" "$HERE/check_chrome.py" "$T/live-chrome.json" "$T/live.jsonl" ||
	fail "chrome check"
"$CAT" -i "$T/rec.mtr" -f chrome -D g1 --label label-1 -O "$T/l1-chrome.json"
"$PYTHON" "$HERE/check_chrome.py" "$T/l1-chrome.json" "$T/back-l1.jsonl" ||
	fail "chrome check (-l label-1)"
"$CAT" -i "$T/rec.mtr" -f chrome -D 7 -O "$T/str-chrome.json"
"$CAT" -i "$T/rec.mtr" -f json -D 7 -O "$T/str.jsonl"
"$PYTHON" "$HERE/check_chrome.py" "$T/str-chrome.json" "$T/str.jsonl" ||
	fail "chrome check (hostile strings)"
pass "Chrome JSON: structure and counts"

# 5. hostile strings in every form
"$PYTHON" "$HERE/check_strings.py" "$T/str.jsonl" "$T/live.txt" || fail "hostile strings"
pass "hostile strings stay inside their quotes"
