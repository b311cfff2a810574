#!/bin/bash
# LabelStats.count is the number of distinct threads ever given a label (as
# proto/mtrace.proto and mtrace-top say); relabels, the number of times a thread was
# given it, is its own field.  A thread toggling between "a" and "b" 14 times is one
# thread of each.  Before: count was the relabel count (a=10, b=7 here).
. "$MTRACE_SRC/tests/rig.sh"
HC="$RELIAB_DIR/hostile-client.py"
: "${TABLE_GUEST:?}"

sim_start
daemon_start
A=$(guest relabel -- "$TABLE_GUEST" relabel 14)
EA=$(json_events relabel)
wait_field "$A" events "$EA" 20
snap
grep "^label $A " "$T/stats"
grep -q "^label $A a count=4 live=3 " "$T/stats" || fail "label a: expected 4 threads"
grep -q "^label $A b count=1 live=1 " "$T/stats" || fail "label b: expected 1 thread"
alive
daemon_stop
