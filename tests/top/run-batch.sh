#!/bin/bash
# mtrace-top -b against the 2014 trace replayed by mtrace-replay: the label groups,
# thread counts and event counts it prints equal those computed from the fixture by
# fixture_model.py.  Two guests: one pass at the recorded pace, and three passes flat
# out (mtrace-replay's id shift must make each pass's threads new threads).
. "$(dirname "$0")/lib.sh"

rig_start || fail "rig"
rig_guest mirage-once "$RIG_REPLAY" --hold --quiet "$FIXTURE" >/dev/null || fail "guest 1"
rig_guest mirage-x3 "$RIG_REPLAY" --hold --quiet --passes 3 --speed 0 "$FIXTURE" >/dev/null ||
	fail "guest 2"
python3 "$TESTS/topcheck.py" fixture "$RIG_TOP" "$RIG_SOCK" "$FIXTURE" mirage-once:1 mirage-x3:3 ||
	fail "batch output differs from the fixture"
