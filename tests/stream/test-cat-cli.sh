#!/bin/bash
# mtrace-cat as a command: help/version, a clear error naming the socket when no daemon
# runs, -n and -t limits, and clean exits on a closed pipe (SIGPIPE/EPIPE) and ^C.
. "$MTRACE_SRC/tests/rig.sh"

"$CAT" --help | grep -q '^usage: mtrace-cat' || fail "--help"
"$CAT" --version | grep -q '^mtrace-cat [0-9]' || fail "--version"
"$CAT" --bogus 2>/dev/null && fail "unknown option accepted"
"$CAT" -o nosuchop 2>&1 | grep -q "unknown op 'nosuchop'" || fail "bad op name accepted"
"$CAT" --stats 10 2>/dev/null && fail "--stats 10 accepted"
pass "options"

out=$("$CAT" -s "$T/nowhere.sock" 2>&1)
rc=$?
[ $rc -eq 1 ] || fail "no daemon: exit $rc"
[ "$out" = "mtrace-cat: mtraced is not running? no socket at $T/nowhere.sock" ] ||
	fail "no daemon: '$out'"
out=$(MTRACE_SOCKET="$T/env.sock" "$CAT" 2>&1)
echo "$out" | grep -q "no socket at $T/env.sock" || fail "MTRACE_SOCKET ignored: $out"
# A socket file nobody listens on (a daemon that died).
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$T/stale.sock"
out=$("$CAT" -s "$T/stale.sock" 2>&1)
echo "$out" | grep -q "mtraced is not running? nothing listens on $T/stale.sock" ||
	fail "stale socket: $out"
if [ "$(id -u)" -ne 0 ]; then
	mkdir "$T/closed" && chmod 000 "$T/closed"
	out=$("$CAT" -s "$T/closed/x.sock" 2>&1)
	echo "$out" | grep -q "permission denied on $T/closed/x.sock" || fail "EACCES: $out"
fi
pass "clear errors when the daemon is not there"

start_harness -N 3000000 -r 100000 -D 1 -R 1
# -n: exactly N events printed, then exit.
timeout 20 "$CAT" -s "$SOCK" -n 1234 >"$T/n.txt" || fail "-n exit $?"
[ "$(grep -vc '^#' "$T/n.txt")" -eq 1234 ] || fail "-n printed $(grep -vc '^#' "$T/n.txt")"
pass "-n"

# Chrome trace-event output is one valid trace (structure: tests/files/check_chrome.py).
timeout 20 "$CAT" -s "$SOCK" -n 200 -f chrome >"$T/chrome.json" || fail "chrome exit $?"
"$PYTHON" "$HERE/../files/check_chrome.py" "$T/chrome.json" >/dev/null ||
	fail "-f chrome is not a well-formed trace"
pass "-f chrome"

# -t: stops after the time even while events flow.
start=$(date +%s%N)
timeout 20 "$CAT" -s "$SOCK" --time 1 -f count || fail "-t exit $?"
ms=$((($(date +%s%N) - start) / 1000000))
[ $ms -ge 900 ] && [ $ms -lt 5000 ] || fail "-t 1 took $ms ms"
pass "-t"

# A reader that goes away: mtrace-cat ends cleanly on EPIPE instead of dying or hanging.
timeout 20 "$CAT" -s "$SOCK" | head -3 >/dev/null
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || fail "closed pipe: exit $rc"
pass "closed pipe"

# ^C
"$CAT" -s "$SOCK" -f json >"$T/int.json" &
CP=$!
PIDS+=("$CP")
sleep 0.5
kill -INT $CP
wait_pid $CP 5 || fail "SIGINT: exit $?"
python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert lines, "no output"
for l in lines:
    json.loads(l)' "$T/int.json" || fail "output after ^C is not complete JSON lines"
pass "SIGINT"

# Daemon stop: the client gets Goodbye and exits 0.
"$CAT" -s "$SOCK" -f count --summary 2>"$T/bye.err" &
CP=$!
PIDS+=("$CP")
sleep 0.3
kill -TERM "$HPID"
wait_pid $CP 10 || fail "daemon stop: exit $?"
grep -q '"goodbye":true' "$T/bye.err" || fail "no goodbye: $(cat "$T/bye.err")"
pass "daemon stop"
