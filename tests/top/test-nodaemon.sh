#!/bin/bash
# mtrace-top without a daemon: a clear message naming the socket, exit 1 — for a missing
# socket, a stale one nobody listens on, and (with --no-reconnect) a daemon that stops
# mid-session; test-reconnect.sh has the default, waiting for it.  Also the command
# line: --help, --version, bad options.
. "$MTRACE_SRC/tests/rig.sh"
FIXTURE=$MTRACE_SRC/data/mirage/log-x86.sexp

check_refused() {	# socket-path
	local out rc
	out=$(timeout 10 "$RIG_TOP" -b -n 1 -s "$1" 2>&1)
	rc=$?
	[ $rc -eq 1 ] || fail "exit status $rc with no daemon at $1 (want 1): $out"
	grep -q "not running" <<<"$out" || fail "no 'not running' in: $out"
	grep -qF "$1" <<<"$out" || fail "the message does not name $1: $out"
	# The interactive path checks the daemon before it touches the terminal.
	out=$(timeout 10 script -qec "$RIG_TOP -S $1" /dev/null 2>&1)
	grep -q "not running" <<<"$out" || fail "interactive: no 'not running' in: $out"
}

check_refused "$T/none.sock"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/stale.sock" ||
	fail "could not make a stale socket"
check_refused "$T/stale.sock"
MTRACE_SOCKET=$T/env.sock timeout 10 "$RIG_TOP" -b -n 1 2>&1 | grep -qF "$T/env.sock" ||
	fail "\$MTRACE_SOCKET not used"

"$RIG_TOP" --version | grep -qx "mtrace-top [0-9][0-9.]*" || fail "--version"
"$RIG_TOP" --help | grep -q -- "--batch" || fail "--help"
"$RIG_TOP" --bogus >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad option: want exit 2"
"$RIG_TOP" --sort NOSUCH -S "$T/none.sock" 2>&1 | grep -q "no column 'NOSUCH'" || fail "-o NOSUCH"
"$RIG_TOP" -d 0 -S "$T/none.sock" >/dev/null 2>&1; [ $? -eq 2 ] || fail "-d 0: want exit 2"

# --no-reconnect: the daemon goes away under a running mtrace-top: it says so and exits
# 1, promptly.
rig_start || fail "rig"
timeout 30 "$RIG_TOP" -b --no-reconnect -d 0.2 -s "$RIG_SOCK" >"$T/top.out" 2>"$T/top.err" &
top=$!
for i in $(seq 50); do
	grep -q "^DOMAIN" "$T/top.out" 2>/dev/null && break
	sleep 0.1
done
grep -q "^DOMAIN" "$T/top.out" || fail "mtrace-top printed nothing"
kill -TERM "$RIG_DAEMON"
wait "$top"
rc=$?
[ $rc -eq 1 ] || fail "exit status $rc after the daemon stopped (want 1)"
grep -q "mtraced" "$T/top.err" || fail "no message after the daemon stopped: $(cat "$T/top.err")"
echo "ok: $(cat "$T/top.err")"
