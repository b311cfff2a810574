#!/bin/bash
# Conformance on the real pipeline: guests on the simulated Xen -> mtraced -> three
# mtrace-cat clients (-f proto, text, json).  Google's protoc decodes the raw stream to
# the same events and notices as the text and JSON forms show, and every label and
# counter name is the one its guest wrote.
. "$MTRACE_SRC/tests/rig.sh"
command -v protoc >/dev/null || { echo "protoc not installed"; exit 77; }

sim_start
daemon_start --set drop_privileges=false
conform_clients
sleep 0.5
load_guest g1 3 "$T/g1.json" --rings 2 -p 64 -n 5000 --rate 20000 --fail 30
# Flat out into a ring far larger than the reader's copy window: drains span windows.
load_guest g2 4 "$T/g2.json" --rings 1 -p 512 -n 20000 --rate 0
wait_guests "$T/g1.json" "$T/g2.json"
sleep 0.5
kill -TERM "$DPID"
for p in "${CPIDS[@]}"; do wait_pid "$p" 20 || fail "mtrace-cat exited $?"; done
python3 "$HERE/conform.py" "$T/raw.bin" "$T/out.txt" "$T/out.json" "$MTRACE_SRC/proto" \
	"$HERE" "$T/g1.json,$T/g2.json" || fail "streams differ"
pass "protoc --decode of the raw stream matches the text and JSON output"
