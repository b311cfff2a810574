#!/bin/bash
# Conformance: the raw stream of `mtrace-cat -f proto`, decoded by Google's protoc
# (protobuf-compiler) against proto/mtrace.proto, has the same content as mtrace-cat's
# own text and JSON output of the same stream.
. "$MTRACE_SRC/tests/rig.sh"
command -v protoc >/dev/null || { echo "protoc not installed"; exit 77; }

start_harness -N 20000 -r 100000 -D 2 -R 2 -w 3 --ring-loss
conform_clients
for p in "${CPIDS[@]}"; do wait_pid "$p" 30 || fail "mtrace-cat exited $?"; done
wait_pid "$HPID" 10
python3 "$HERE/conform.py" "$T/raw.bin" "$T/out.txt" "$T/out.json" "$MTRACE_SRC/proto" \
	"$HERE" "$T/harness.json" || fail "streams differ"
pass "protoc --decode of the raw stream matches the text and JSON output"
