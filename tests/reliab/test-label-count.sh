#!/bin/bash
# LabelStats.count is the number of distinct threads ever given a label (as
# proto/mtrace.proto and mtrace-top say); relabels, the number of times a thread was
# given it, is its own field.  A thread toggling between "a" and "b" 14 times is one
# thread of each.  Before: count was the relabel count (a=10, b=7 here).  current is
# the threads whose last label it is, beside count's threads that ever carried it.
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
# current (docs/figures.md): the toggling thread's last label is b (its 14th), so a is
# the current label of the three others only; 4 threads labelled, none ended
grep -q "^label $A a count=4 live=3 current=3 " "$T/stats" || fail "label a: current 3"
grep -q "^label $A b count=1 live=1 current=1 " "$T/stats" || fail "label b: current 1"
grep -q "^dom $A .* labelled=4 " "$T/stats" || fail "domain: 4 threads labelled"
grep -q "^dom $A .* ended=0 " "$T/stats" || fail "domain: no thread ended"
alive
daemon_stop
