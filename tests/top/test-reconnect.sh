#!/bin/bash
# mtrace-top survives mtraced restarting (issue 13): killed (-9) or stopped (Goodbye),
# mtraced goes away under a running mtrace-top, which says that it waits (batch: one
# line on stderr; screen: the bottom line, over the last snapshot), retries with
# back-off, and carries on once a new mtraced listens: more updates, same options.
. "$MTRACE_SRC/tests/rig.sh"
FIXTURE=$MTRACE_SRC/data/mirage/log-x86.sexp

L=mtrace-top-reconnect-$$
TMUX_CMD=(tmux -L "$L" -f "$T/tmux.conf")
test_cleanup() { "${TMUX_CMD[@]}" kill-server >/dev/null 2>&1; }
printf 'set -g remain-on-exit on\nset -g status off\n' >"$T/tmux.conf"

# A new mtraced where the rig's was (rig_stop stops whichever runs).
restart_daemon() {
	rig_daemon_start || fail "mtraced did not come back"
}

wait_for() {	# file regex seconds
	for _ in $(seq $(($3 * 10))); do
		grep -Eq "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

rig_start || fail "rig"
rig_guest mirage-blk "$RIG_REPLAY" --hold --quiet "$FIXTURE" >/dev/null || fail "guest"

# --- batch -------------------------------------------------------------------------
"$RIG_TOP" -b -d 0.2 -s "$RIG_SOCK" >"$T/top.out" 2>"$T/top.err" &
top=$!
wait_for "$T/top.out" "^DOMAIN" 10 || fail "mtrace-top printed nothing"
kill -KILL "$RIG_DAEMON"
wait_for "$T/top.err" "waiting for mtraced" 10 || fail "batch: no 'waiting' after kill -9"
kill -0 "$top" || fail "batch: mtrace-top exited when mtraced was killed"
n=$(grep -c "^DOMAIN" "$T/top.out")
restart_daemon
wait_for "$T/top.err" "reconnected" 15 || fail "batch: did not reconnect: $(cat "$T/top.err")"
for _ in $(seq 100); do [ "$(grep -c "^DOMAIN" "$T/top.out")" -gt $((n + 2)) ] && break; sleep 0.1; done
[ "$(grep -c "^DOMAIN" "$T/top.out")" -gt $((n + 2)) ] || fail "batch: no updates after reconnecting"
grep -q "mirage-blk" "$T/top.out" || fail "batch: the guest is not shown"
# a clean stop this time: Goodbye
kill -TERM "$RIG_DAEMON"
wait_for "$T/top.err" "ended the session.*waiting for mtraced" 10 || fail "batch: Goodbye not told"
restart_daemon
for _ in $(seq 150); do [ "$(grep -c reconnected "$T/top.err")" -ge 2 ] && break; sleep 0.1; done
[ "$(grep -c reconnected "$T/top.err")" -ge 2 ] || fail "batch: no second reconnect"
kill -TERM "$top"
wait "$top"
echo "ok: batch: $(tr '\n' ' ' <"$T/top.err")"

# --- screen (tmux) -----------------------------------------------------------------
"${TMUX_CMD[@]}" new-session -d -s top -x 160 -y 40 \
	"TERM=xterm $RIG_TOP -s $RIG_SOCK -d 0.3; echo \$? >$T/top.status" || fail "tmux"
screen() { "${TMUX_CMD[@]}" capture-pane -p -t top; }
wait_screen() {	# regex seconds
	for _ in $(seq $(($2 * 10))); do
		screen | grep -Eq "$1" && return 0
		sleep 0.1
	done
	screen >&2
	return 1
}
wait_screen "mirage-blk" 10 || fail "screen: the guest is not shown"
kill -KILL "$RIG_DAEMON"
wait_screen "waiting for mtraced" 10 || fail "screen: no 'waiting for mtraced'"
screen | grep -q "mirage-blk" || fail "screen: the last snapshot is gone while waiting"
restart_daemon
wait_screen "reconnected to mtraced" 15 || fail "screen: did not reconnect"
screen | grep -q "waiting for mtraced" && fail "screen: still says waiting"
"${TMUX_CMD[@]}" send-keys -t top q
for _ in $(seq 50); do [ -s "$T/top.status" ] && break; sleep 0.1; done
[ "$(cat "$T/top.status" 2>/dev/null)" = 0 ] || fail "screen: exit status $(cat "$T/top.status" 2>/dev/null)"
echo "ok: screen: waited over the last snapshot, reconnected, q quits with 0"
