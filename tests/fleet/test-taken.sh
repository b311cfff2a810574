#!/bin/bash
# A message whose id the stream already has (issue 36, #2): the stream acknowledges it
# as a duplicate and drops it.  For a message mtrace-ship never sent before that means
# someone else took its id: ship-taken.c publishes one through mtrace-ship's own queue
# and JetStream link, under an id stored here first, and checks that it is counted as
# taken and lost (a Loss notice of its events), never as shipped.
. "$(dirname "$0")/../rig.sh"
. "$HERE/lib.sh"
: "${TAKEN:?}"

nats_start
"$PYTHON" "$HERE/js_forge.py" "$NATS_PORT" - create || fail "cannot create the stream"
"$PYTHON" "$HERE/js_forge.py" "$NATS_PORT" - pub mtrace.h2._.events h1-taken-1 >"$T/pub.out" ||
	fail "cannot store the id first: $(cat "$T/pub.out")"
"$TAKEN" "$NATS_URL" h1-taken-1 >"$T/taken.out" 2>"$T/taken.err" ||
	fail "$(cat "$T/taken.out" "$T/taken.err")"
cat "$T/taken.out"
n=$("$CAT" --nats "$NATS_URL" --host h1 -f count --summary 2>&1 >/dev/null | grep '^{"events"')
echo "$n" | grep -q '"events":5,' && echo "$n" | grep -q '"dropped_for_client":5,' ||
	fail "the stream has for h1: $n (5 events shipped and a loss of 5 told)"
pass "a message whose id the stream had: counted as taken and lost, a Loss notice of its 5 events in the stream, never shipped"
