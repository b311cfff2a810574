#!/bin/bash
# test-flood.sh - mtrace-web's HTTP front under exhaustion (issue 25 #4, #5), while a
# busy guest fills the feed's history and a legitimate client from 127.0.0.1 asks every
# 0.25 s and must be answered within 1 s throughout:
#  - 500 clients (from 127.0.0.2-11) ask for /api/state and /events and never read:
#    resident memory stays under the figure mtrace-web(1) states (LIMITS), the clients
#    that do not read are closed and opened again;
#  - 2,000 connections that send nothing, opened again when closed, on
#    --listen 0.0.0.0 --token-file: the client with the token is still served.
# Attackers in Python (tests/web/http_flood.py).
. "$(dirname "$0")/lib.sh"
RSS_MAX_KB=$((128 * 1024))	# mtrace-web(1), LIMITS
# Under the sanitizers (redzones, shadow, quarantine) the figure is not the program's:
# the same attack runs, for what the sanitizers find, with the bound only printed and
# 3 s for the legitimate client (their slowdown is not the program's either), 5 s a flood.
grep -q __asan_init "$WEB" 2>/dev/null && RSS_MAX_KB=$((64 << 20)) &&
	export FLOOD_LEGIT_S=3 FLOOD_SECONDS_MAX=5
rig_start || fail "the rig did not start"
load=$(rig_guest busy -- "$RIG_LOAD" --rings 4 --threads 50 --labels 16 --counters 8 \
	--rate 50000 --duration 120) || fail "create the busy guest"
web_start
held() { "$PYTHON" -c 'import json,sys,urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1] + "api/state"))["web"]["history"]["bytes"])' "$WEB_URL"; }
wait_until 60 eval '[ "$(held)" -gt $((8 << 20)) ]' || fail "the history did not fill ($(held) bytes)"
note "mtrace-web at $WEB_URL, $(held) bytes of history, $(web_rss_kb) kB resident"
"$PYTHON" "$MTRACE_SRC/tests/web/http_flood.py" noread "$WEB_URL" "$WEB_PID" \
	/api/state,/events 500 10 "$RSS_MAX_KB" || fail "clients that do not read"
kill -0 "$WEB_PID" 2>/dev/null || fail "mtrace-web died"
curl -sf "${WEB_URL}api/state" | "$PYTHON" -c 'import json,sys; w=json.load(sys.stdin)["web"]; print("# front: %d connections, %d refused, %d cut, %d answers refused (busy)" % (w["connections"], w["refused_connections"], w["cut_connections"], w["busy_answers"]))'
kill -TERM "$WEB_PID"
wait "$WEB_PID" || fail "mtrace-web exited with status $? on SIGTERM"
WEB_PID=

TOK=$RIG_DIR/token
head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$TOK"
chmod 600 "$TOK"
web_start -l 0.0.0.0:0 -T "$TOK"
PORT=$(sed -n 's|^mtrace-web: serving http://0.0.0.0:\([0-9]*\)/.*|\1|p' "$RIG_DIR/web.out")
"$PYTHON" "$MTRACE_SRC/tests/web/http_flood.py" idle "http://127.0.0.1:$PORT/" "$WEB_PID" \
	2000 10 "$(cat "$TOK")" /api/state "$RSS_MAX_KB" || fail "idle connections"
kill -0 "$WEB_PID" 2>/dev/null || fail "mtrace-web died"
exit 0
