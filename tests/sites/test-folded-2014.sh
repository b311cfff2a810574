#!/bin/bash
# mtrace-cat -f folded on the 2014 MirageOS trace replayed as a guest (label paths):
# every line is a folded stack, and the weights add up to the thread count, three
# ways: the folded total, mtraced's threads_total, and the threads of the trace itself
# (mtrace-replay --dump, counted as the daemon counts them).
. "$(dirname "$0")/../rig.sh"
: "${CAT:?}" "${REPLAY:?}" "${FIXTURE:?}"

sim_start
daemon_start
"$CAT" -s "$SOCK" -f folded --frames label --time 60 >"$T/m.folded" 2>"$T/folded.err" &
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
HERE=$HERE "$PYTHON" - "$T/m.folded" "$T/dump" "$TOTAL" <<'PY' || fail "folded totals"
import re, sys
sys.path.insert(0, __import__("os").environ["HERE"])
import trace_threads
lines = open(sys.argv[1]).read().splitlines()
total = 0
for l in lines:
    m = re.match(r"^([^;\n]+(?:;[^;\n]+)*) (\d+)$", l)
    assert m, "not a folded stack: %r" % l
    total += int(m.group(2))
n = trace_threads.count(sys.argv[2])
daemon = int(sys.argv[3])
print("# 2014 trace: %d folded stacks, total %d; mtraced threads_total %d; trace %d"
      % (len(lines), total, daemon, n))
assert total == daemon == n
PY
daemon_stop
