#!/bin/bash
# mtrace-cat -f folded on the 2014 MirageOS trace replayed as a guest (label paths):
# every line is a folded stack, and the weights add up to the thread count, three
# ways: the folded total, mtraced's threads_total, and the threads of the trace itself
# (mtrace-replay --dump, counted as the daemon counts them).
. "$(dirname "$0")/../rig.sh"
: "${CAT:?}" "${REPLAY:?}" "${FIXTURE:?}"

sim_start
daemon_start
"$CAT" -s "$SOCK" -f folded --frames label -t 60 >"$T/m.folded" 2>"$T/folded.err" &
FOLDED=$!
PIDS+=("$FOLDED")
sleep 0.3
M=$(guest m --preserve-poweroff -- "$REPLAY" --hold --quiet --speed 0 "$FIXTURE")
EVENTS=$(( $("$REPLAY" --dump "$FIXTURE" 2>/dev/null | wc -l) + 1 )) # + ring_start
wait_field "$M" events "$EVENTS" 20
snap
TOTAL=$(field "$M" total)
sleep 0.3
kill -INT "$FOLDED"
wait "$FOLDED" || fail "mtrace-cat -f folded: $(cat "$T/folded.err")"
"$REPLAY" --dump "$FIXTURE" 2>/dev/null >"$T/dump"
"$PYTHON" - "$T/m.folded" "$T/dump" "$TOTAL" <<'PY' || fail "folded totals"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
total = 0
for l in lines:
    m = re.match(r"^([^;\n]+(?:;[^;\n]+)*) (\d+)$", l)
    assert m, "not a folded stack: %r" % l
    total += int(m.group(2))
# threads as mtraced counts them: every id an event names as its thread or as the
# thread it creates, resolves or signals; a CREATES of a known id is a new thread
seen, n = set(), 0
for l in open(sys.argv[2]):
    f = l.split(" ", 5)
    op, thread, arg = f[1], int(f[2]), int(f[3])
    if op in ("gc",):
        continue
    if thread != -1 and thread not in seen:
        seen.add(thread); n += 1
    if op == "creates" and arg != -1 and arg != thread:
        n += 1
        seen.add(arg)
    elif op in ("fulfills", "fails", "signal", "signal_new") and arg != -1 and arg not in seen:
        seen.add(arg); n += 1
daemon = int(sys.argv[3])
print("# 2014 trace: %d folded stacks, total %d; mtraced threads_total %d; trace %d"
      % (len(lines), total, daemon, n))
assert total == daemon == n
PY
daemon_stop
