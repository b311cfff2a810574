#!/bin/bash
# The repro of issue 37: mtrace-load (CLOCK_MONOTONIC, the default) beside mtrace-replay
# (CLOCK_REALTIME) recorded for about 4 s, then mtrace-cat -i REC -f chrome.  Before
# one timeline the origin was whichever guest's event came first: the other guest's
# events came out 56 years away or all held at 0.  Now:
#   - Perfetto's importer (modelled, tests/files/check_chrome.py) takes the trace whole:
#     every slice ends, every flow binds, the counts are the stream's, GC ends at the
#     stream's host ns (check_timeline.py chrome);
#   - one base: the metadata's origin is the smallest host time of the capture, nothing
#     clamped or held, both guests within the capture's seconds of it;
#   - the times are each guest's: the realtime guest's host time is its own ts, the
#     monotonic guest's map (same-kernel) agrees with CLOCK_REALTIME - CLOCK_MONOTONIC
#     measured here, within its uncertainty and 1 ms (the two are read seconds apart).
. "$(dirname "$0")/lib.sh"

sim_start
daemon_start
record two
load_guest load 5 "$T/load.json" --duration 4 --rate 10000
guest replay --domid 6 -- "$REPLAY" --loop "$MTRACE_SRC/data/mirage/log-x86.sexp" >/dev/null
wait_until 60 [ -s "$T/load.json" ] || fail "mtrace-load did not finish"
"$SIMXEN" --dir "$SIM" destroy 6 >/dev/null || fail "destroy replay"
# the recorder has the replay's last events once it has its domain_down
replay_down() {
	"$CAT" -i "$T/two.mtr" -f json 2>/dev/null | grep -q '"type":"domain_down","domid":6'
}
wait_until 30 replay_down || fail "the recording has no domain_down of the replay"
record_stop
"$CAT" -i "$T/two.mtr" -f json -O "$T/two.jsonl" || fail "-i -f json"
offset=$("$PYTHON" -c '
import time
best = None
for _ in range(20):
    a = time.clock_gettime_ns(time.CLOCK_REALTIME)
    m = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    b = time.clock_gettime_ns(time.CLOCK_REALTIME)
    if best is None or b - a < best[1]:
        best = ((a + b) // 2 - m, b - a)
print(best[0])')
"$PYTHON" "$CHECK" offset "$T/two.jsonl" 5 "$offset" 1000000 || fail "the monotonic guest's map"
"$PYTHON" - "$T/two.jsonl" <<'PY' || fail "the realtime guest's host times"
import json, sys
n = 0
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d.get("type") == "event" and d["domid"] == 6:
        if d.get("host_ns") != d["ts"]:
            sys.exit("dom6 (realtime): host_ns %r for ts %d" % (d.get("host_ns"), d["ts"]))
        n += 1
if n < 1000:
    sys.exit("only %d events of the replay" % n)
print("the realtime guest: %d events, each at its own ts on the host timeline" % n)
PY
"$CAT" -i "$T/two.mtr" -f chrome -O "$T/two-chrome.json" || fail "-f chrome"
"$PYTHON" "$CHECK" chrome "$T/two-chrome.json" "$T/two.jsonl" || fail "Perfetto's rules, one base"
"$PYTHON" - "$T/two-chrome.json" <<'PY' || fail "the two guests are not side by side"
import json, sys
d = json.load(open(sys.argv[1]))
span = {}
for e in d["traceEvents"]:
    if "ts" in e:
        t = float(e["ts"]) / 1e6
        lo, hi = span.get(e["pid"], (t, t))
        span[e["pid"]] = (min(lo, t), max(hi, t))
if sorted(span) != [5, 6]:
    sys.exit("pids %r" % sorted(span))
for pid, (lo, hi) in span.items():
    if lo < 0 or hi > 30:
        sys.exit("dom%d spans %.6f..%.6f s of the trace" % (pid, lo, hi))
if span[5][0] > span[6][1] or span[6][0] > span[5][1]:
    sys.exit("the guests do not overlap: %r" % span)
print("side by side: dom5 %.3f..%.3f s, dom6 %.3f..%.3f s" % (span[5] + span[6]))
PY
pass "the repro: one base, nothing held, both guests at their own times"
daemon_stop
