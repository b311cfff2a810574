#!/bin/bash
# 1 and 16 clients with different filters (domains by id and name, ops, label prefixes,
# statistics only) each receive exactly the events their filter selects, nothing lost.
. "$MTRACE_SRC/tests/rig.sh"

FILTERS=(
	""
	"-D 1"
	"-D guest2"
	"-D 1 -D guest3"
	"-o creates,read"
	"-o 5,counter -o fails"
	"--label net/"
	"--label net/rx"
	"--label disk -D 2"
	"-o switch --label net/tx -D 3"
	"--no-events --stats 100"
	"-D 99"
	""
	"-D guest3 -D 1"
	"-o gc --label net"
	"-f json -o fails,label"
)

run_clients() {	# count: the first COUNT filters, until they end
	local p
	filter_clients "${FILTERS[@]:0:$1}"
	for p in "${CPIDS[@]}"; do wait_pid "$p" 40 || fail "mtrace-cat exited with $?"; done
}

# One client, all events.
start_harness -N 50000 -r 100000 -D 3 -R 2 -w 1
run_clients 1
wait_pid "$HPID" 10
python3 "$HERE/client_counts.py" harness "$T/harness.json" "$T" 1 || fail "1 client"
pass "1 client got exactly what was generated"

# Sixteen clients, sixteen filters (some equal: they share encoded batches).
rm -f "$SOCK"
start_harness -N 50000 -r 100000 -D 3 -R 2 -w 16
run_clients 16
wait_pid "$HPID" 10
python3 "$HERE/client_counts.py" harness "$T/harness.json" "$T" 16 || fail "16 clients"
# The JSON client printed one line per event it counted, each a valid object.
want=$(python3 "$HERE/client_counts.py" expect "$T/harness.json" -o fails,label)
got=$(python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    o = json.loads(line)
    n += o["type"] == "event"
print(n)' "$T/c15.out") || fail "json output does not parse"
[ "$got" = "$want" ] || fail "json lines: $got events, want $want"
pass "16 clients got exactly what their filters select"
