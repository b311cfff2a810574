#!/bin/bash
# mtrace-web's output memory whatever the guests' tables hold (issue 36 #12): 16 guests
# with full tables (1,024 labels of 250 bytes, 256 counters and 256 failure strings
# each, the caps of mtraced(8)) make /api/state an answer of megabytes; 500 clients
# ask for it and never read.  mtrace-web's resident memory (from /proc) stays under the
# figure mtrace-web(1) states (LIMITS) while they ask and after, and a client that
# reads is still answered within a second.  Before (each answer built for its request,
# the closed connections' output freed only after the loop turn's other requests were
# answered): 2,538,556 kB at the peak and 2,502,604 kB after, the documented output
# total being 64 MiB.
. "$MTRACE_SRC/tests/web/lib.sh"
: "${TABLE_GUEST:?}"
# mtrace-web(1), LIMITS: the history (--history, 32 MiB by default), 64 MiB of answers
# and 32 MiB of the program's own
RSS_MAX_KB=$(((32 + 64 + 32) * 1024))
# Under the sanitizers (redzones, shadow, quarantine) the figure is not the program's:
# the same attack runs, for what the sanitizers find, with the bound only printed.
SAN=
grep -q __asan_init "$WEB" 2>/dev/null && SAN=1 && export FLOOD_LEGIT_S=5 FLOOD_SECONDS_MAX=5

sim_start
daemon_start
GUESTS=()
for i in $(seq 1 16); do
	GUESTS+=("$(guest "tables$i" -- "$TABLE_GUEST" tables 1100 250)")
done
for i in $(seq 1 16); do json_events "tables$i" >/dev/null; done
# and one busy guest, so that the feed changes between any two requests: no two answers
# could share a state if it were built at each change
load_guest busy 40 "$T/busy.json" --rings 1 --rate 20000 --duration 60 >/dev/null
web_start
state_bytes() { curl -sf "${WEB_URL}api/state" | wc -c; }
# every guest's counters and strings in the statistics mtrace-web holds, and labels up
# to the 4 MiB a Stats frame may take (mtraced cuts the rest)
full() {
	curl -sf "${WEB_URL}api/state" | "$PYTHON" -c '
import json, sys
s = json.load(sys.stdin)["stats"]
d = [x for x in (s or {}).get("domains", []) if len(x["counters"]) == 256]
sys.exit(0 if len(d) == 16 and len(s["labels"]) >= 8000 else 1)'
}
wait_until 60 full || {
	curl -sf "${WEB_URL}api/state" | "$PYTHON" -c '
import json, sys
s = json.load(sys.stdin)["stats"] or {}
print("stats of %d domains, counters %s, %d labels" % (len(s.get("domains", [])),
      [len(x["counters"]) for x in s.get("domains", [])], len(s.get("labels", []))))' >&2
	fail "mtrace-web's statistics never held the 16 guests' full tables"
}
bytes=$(state_bytes)
rss0=$(web_rss_kb)
note "/api/state is $bytes bytes; mtrace-web at $rss0 kB resident"
[ "$bytes" -gt $((4 << 20)) ] || fail "an /api/state of $bytes bytes proves nothing"

limit=$RSS_MAX_KB
[ -n "$SAN" ] && limit=$((64 << 20))
"$PYTHON" "$MTRACE_SRC/tests/web/http_flood.py" noread "$WEB_URL" "$WEB_PID" \
	/api/state 500 10 "$limit" >"$T/flood.out"
rc=$?
cat "$T/flood.out"
peak=$(sed -n 's/.* \([0-9]*\) kB at most.*/\1/p' "$T/flood.out")
sleep 2
after=$(web_rss_kb)
kill -0 "$WEB_PID" 2>/dev/null || fail "mtrace-web died"
curl -sf "${WEB_URL}api/state" | "$PYTHON" -c '
import json, sys
w = json.load(sys.stdin)["web"]
a = w["answers"]
print("# front: %d connections, %d cut, %d answers refused (busy), %d bytes queued; "
      "states built %d, stale answers %d, answers hold %d of %d bytes" %
      (w["connections"], w["cut_connections"], w["busy_answers"], w["queued_bytes"],
       a["states_built"], a["stale"], a["bytes"], a["max_bytes"]))' ||
	fail "no /api/state after the flood"
note "resident: $rss0 kB before, $peak kB at the peak, $after kB 2 s after"
if [ -n "$SAN" ]; then
	note "a sanitizer build: the bound of $RSS_MAX_KB kB is not checked"
else
	[ "$rc" = 0 ] || fail "500 unread /api/state: $(grep FAIL "$T/flood.out" | head -3)"
	[ "$after" -lt "$RSS_MAX_KB" ] ||
		fail "mtrace-web holds $after kB after the flood (bound $RSS_MAX_KB kB)"
	pass "mtrace-web under $RSS_MAX_KB kB: $peak kB at the peak, $after kB after"
fi
kill -TERM "$WEB_PID"
wait "$WEB_PID" || fail "mtrace-web exited with status $? on SIGTERM"
WEB_PID=
"$SIMXEN" --dir "$SIM" destroy 40 >/dev/null
