#!/bin/bash
# mtrace-top on a real terminal (tmux 160x50): sort, reverse, filter, tree, group by
# label, domain filter, help, pause, resize, domains appearing and going, quit — each
# checked on the captured screen by tmuxdrive.py.
. "$MTRACE_SRC/tests/rig.sh"
FIXTURE=$MTRACE_SRC/data/mirage/log-x86.sexp

L=mtrace-top-test-$$
TMUX_CMD=(tmux -L "$L" -f "$T/tmux.conf")
test_cleanup() { "${TMUX_CMD[@]}" kill-server >/dev/null 2>&1; }
# The pane stays after mtrace-top exits so that its exit status can be read.
printf 'set -g remain-on-exit on\nset -g status off\n' >"$T/tmux.conf"

rig_start || fail "rig"
# Two passes, then idle: rows stay put while keys are checked.
rig_guest mirage-blk "$RIG_REPLAY" --hold --passes 2 --quiet "$FIXTURE" >/dev/null || fail "guest 1"
rig_guest mirage-once "$RIG_REPLAY" --hold --quiet "$FIXTURE" >/dev/null || fail "guest 2"

# The exit status goes to a file: tmux's own #{pane_dead_status} is not always there.
"${TMUX_CMD[@]}" new-session -d -s top -x 160 -y 50 \
	"TERM=xterm $RIG_TOP -s $RIG_SOCK -d 0.3; echo \$? >$T/top.status" || fail "tmux"
python3 "$HERE/tmuxdrive.py" "$L" "$T/tmux.conf" top "$T/top.status" \
	"$RIG_SIMXEN" "$RIG_SIM" "$RIG_REPLAY" "$FIXTURE" || fail "interactive checks"
