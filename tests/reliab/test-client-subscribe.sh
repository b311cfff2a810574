#!/bin/bash
# A Subscribe that protobuf-c accepts but whose packed copy would not unpack (an
# unknown field under a non-minimal tag: protobuf-c keeps it, then packs its tag
# minimally) is taken as if the field were not there: events flow.  (Whatever cannot
# be taken gets an Error.)  Before: the group's copy failed, the log said "out of
# memory", and the client got neither events nor an Error.
. "$MTRACE_SRC/tests/rig.sh"
HC="$RELIAB_DIR/hostile-client.py"

sim_start
daemon_start
G=$(guest flood -- "$HOSTILE" --pages 64 flood)
wait_match "$G" events '^[1-9]' 10
"$PYTHON" "$HC" badsub "$SOCK" >"$T/badsub.out"
note "client with the odd Subscribe: $(cat "$T/badsub.out")"
grep -Eq "^(events [1-9]|error [1-9])" "$T/badsub.out" || fail "no events and no Error"
grep -q "out of memory" "$DLOG" && fail "the daemon logged out of memory"
alive
"$SIMXEN" --dir "$SIM" destroy "$G" >/dev/null
daemon_stop
