#!/bin/bash
# Statistics with a top-N asked before any guest exists, and of a guest with no
# threads: an empty Stats, and nothing undefined on the way (the sanitizer build's log
# must stay clean).  Before: qsort(NULL, 0, ...) in state-stats.c, which UBSan reports
# ("null pointer passed as argument 1").
. "$MTRACE_SRC/tests/rig.sh"
HC="$RELIAB_DIR/hostile-client.py"

sim_start
daemon_start
"$PYTHON" "$HC" stats "$SOCK" top >"$T/empty.out" || fail "no Stats with no guest"
note "$(head -1 "$T/empty.out")"
G=$(guest idle -- "$HOSTILE" count 0)
wait_match "$G" events '^[0-9]' 10
"$PYTHON" "$HC" stats "$SOCK" top >"$T/idle.out" || fail "no Stats with an idle guest"
grep -q "threads=0" "$T/empty.out" || fail "threads where there are none"
grep -E "runtime error|Sanitizer" "$DLOG" && fail "the sanitizer reported"
alive
daemon_stop
