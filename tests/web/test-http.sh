#!/bin/bash
# test-http.sh - mtrace-web against abuse (bad paths and methods, oversized headers,
# slowloris, 1,000 connections: a clear HTTP error, no crash, bounded memory) and its
# access rules (loopback Host check; elsewhere a token on every request, and no start
# without one).  No browser: Python's sockets.
. "$(dirname "$0")/lib.sh"
rig_start || fail "the rig did not start"
web_start --request-timeout 2 --max-connections 400
grep -q -- '--no-token: every local user can read the traces' "$RIG_DIR/web.err" ||
	fail "--no-token not said at start: $(cat "$RIG_DIR/web.err")"
echo "ok: --no-token (web_start's) is said at start"
note "mtrace-web at $WEB_URL"
rss0=$(web_rss_kb)
"$PYTHON" "$MTRACE_SRC/tests/web/http_abuse.py" abuse "$WEB_URL" "$WEB_PID" || fail "abuse"
kill -0 "$WEB_PID" 2>/dev/null || fail "mtrace-web died under abuse"
rss1=$(web_rss_kb)

# mtraced goes away and comes back: the state says so, and mtrace-web connects again.
state() { "$PYTHON" -c 'import json,sys,urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1] + "api/state"))["connected"])' "$WEB_URL"; }
kill -TERM -- "-$RIG_DAEMON" 2>/dev/null || kill -TERM "$RIG_DAEMON"
wait "$RIG_DAEMON" 2>/dev/null
for _ in $(seq 50); do [ "$(state)" = False ] && break; sleep 0.1; done
[ "$(state)" = False ] || fail "mtrace-web did not notice mtraced leaving"
setsid "$RIG_MTRACED" --backend sim --sim-dir "$RIG_SIM" -s "$RIG_SOCK" --foreground -c /dev/null \
	>>"$RIG_DIR/mtraced.log" 2>&1 </dev/null &
RIG_DAEMON=$!
for _ in $(seq 100); do [ "$(state)" = True ] && break; sleep 0.1; done
[ "$(state)" = True ] || fail "mtrace-web did not connect to the new mtraced"
echo "ok: mtraced stopped and started again: mtrace-web said so and connected again"
grep -q 'lost mtraced' "$RIG_DIR/web.err" || fail "no word of it on stderr"

note "mtrace-web resident memory: ${rss0} kB before, ${rss1} kB after"
[ "$rss1" -lt $((rss0 + 65536)) ] || fail "memory grew by $((rss1 - rss0)) kB"
kill -TERM "$WEB_PID"
wait "$WEB_PID" || fail "mtrace-web exited with status $? on SIGTERM"
WEB_PID=

# On a Unix socket (the admin's other choice on one host): mode 0660, no token needed,
# no Host check, the strict framing still; the socket goes when mtrace-web does.
"$WEB" -s "$RIG_SOCK" -l "unix:$RIG_DIR/web.sock" >"$RIG_DIR/web.out" 2>"$RIG_DIR/web.err" &
WEB_PID=$!
wait_until 10 test -S "$RIG_DIR/web.sock" || fail "no socket: $(cat "$RIG_DIR/web.err")"
"$PYTHON" "$MTRACE_SRC/tests/web/http_abuse.py" unix "$RIG_DIR/web.sock" /api/state ||
	fail "Unix socket"
kill -TERM "$WEB_PID"
wait "$WEB_PID" || fail "mtrace-web exited with status $? on SIGTERM"
WEB_PID=
[ -e "$RIG_DIR/web.sock" ] && fail "the Unix socket is left behind"
echo "ok: the Unix socket is removed at the end"

# Loopback over TCP: no start without one of the admin's three choices (issue 25 #8:
# it showed every trace to every local uid); --no-token is one, and says so.
out=$("$WEB" -s "$RIG_SOCK" -l 127.0.0.1:0 2>&1)
rc=$?
[ $rc -eq 2 ] && grep -q 'Choose: --token-file FILE, --listen unix:/PATH .*, or --no-token' <<<"$out" ||
	fail "loopback without a choice: status $rc, '$out'"
echo "ok: refuses loopback without a token, a Unix socket or --no-token"

# Not loopback: no start without a token; a token file others can read is refused.
out=$("$WEB" -s "$RIG_SOCK" -l 0.0.0.0:0 2>&1)
rc=$?
[ $rc -eq 2 ] && grep -q 'refusing to listen on 0.0.0.0:0 without a token' <<<"$out" ||
	fail "0.0.0.0 without a token: status $rc, '$out'"
echo "ok: refuses 0.0.0.0 without a token: $out"
TOK=$RIG_DIR/token
head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$TOK"
chmod 644 "$TOK"
out=$("$WEB" -s "$RIG_SOCK" -l 0.0.0.0:0 -T "$TOK" 2>&1)
[ $? -eq 2 ] && grep -q 'readable by everyone' <<<"$out" || fail "world-readable token: '$out'"
echo "ok: refuses a world-readable token file: $out"
chmod 600 "$TOK"
web_start -l 0.0.0.0:0 -T "$TOK"
PORT=$(sed -n 's|^mtrace-web: serving http://0.0.0.0:\([0-9]*\)/.*|\1|p' "$RIG_DIR/web.out")
[ -n "$PORT" ] || fail "no port in $(cat "$RIG_DIR/web.out")"
"$PYTHON" "$MTRACE_SRC/tests/web/http_abuse.py" token "http://127.0.0.1:$PORT/" "$WEB_PID" "$(cat "$TOK")" ||
	fail "token"
kill -0 "$WEB_PID" 2>/dev/null || fail "mtrace-web died"
exit 0
