#!/bin/bash
# The page draws event-channel pairs across domains (issue 37): two pingpong guests on
# two clocks (monotonic and realtime) signal each other ROUNDS round trips under the
# simulated Xen; one recording.  mtrace-cat -f json pairs and judges the sends and
# receives; mtrace-web serves the same recording to chromium-headless-shell, and the
# page (drive-pairs.mjs) must hold the same pairs and, with the whole capture in view,
# draw one arrow per ordered pair from the sender's band to the receiver's, every one
# pointing forward in time -- N arrows, N mtrace-cat's ordered evtchn_pair lines.
. "$(dirname "$0")/lib.sh"
[ -x /usr/bin/chromium-headless-shell ] ||
	{ echo "SKIP: chromium-headless-shell is not installed (scripts/bootstrap)"; exit 77; }
[ -f "$MTRACE_SRC/tests/web/node_modules/puppeteer-core/package.json" ] ||
	{ echo "SKIP: puppeteer-core is not installed (scripts/bootstrap: npm ci in tests/web)"; exit 77; }
ROUNDS=${ROUNDS:-300}

sim_start
daemon_start
record pairs
pp_guest gmono 31 monotonic 32 "" "$ROUNDS"
pp_guest greal 32 realtime "" 31 "$ROUNDS"
pp_link 31 32
wait_until 90 eval '[ -s "$T/gmono.json" ] && [ -s "$T/greal.json" ]' ||
	fail "the guests did not finish: $(cat "$T"/g*.log | tail -5)"
record_stop
"$CAT" -i "$T/pairs.mtr" -f json -O "$T/pairs.jsonl" || fail "-i -f json"
"$PYTHON" "$CHECK" pairs "$T/pairs.jsonl" $((2 * ROUNDS)) "$T/gmono.json" "$T/greal.json" ||
	fail "mtrace-cat's pairs"
N=$(grep '"type":"evtchn_pair"' "$T/pairs.jsonl" | grep -c '"order":"ordered"')
note "mtrace-cat -f json: $N ordered evtchn_pair lines"

"$WEB" -i "$T/pairs.mtr" -l 127.0.0.1:0 --no-token --history 256 --queue 256 \
	>"$T/web.out" 2>"$T/web.err" &
PIDS+=($!)
wait_until 10 grep -q 'serving http' "$T/web.out" || fail "mtrace-web did not start"
WEB_URL=$(sed -n 's|^mtrace-web: serving \(http://[^ ]*/\).*|\1|p' "$T/web.out")
WEB_URL=$WEB_URL PAIRS_JSONL=$T/pairs.jsonl ORDERED=$N \
	node "$HERE/drive-pairs.mjs" || fail "the page's arrows across domains"
pass "the page: $N arrows across domains, every one forward in time, as mtrace-cat's pairs"
daemon_stop
