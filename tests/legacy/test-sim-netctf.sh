#!/bin/bash
# net.ctf served by a simulated legacy guest (one read-only grant per page, refs in
# data/mprof/ring-ref): mtraced must stream exactly the events the independent reader
# (ctf_reader.py) finds in the file, marked legacy, nothing lost or corrupt.
# Usage: test-sim-netctf.sh SIMXEN MTRACED CAT GUEST NET.CTF CHECK_NETCTF.PY
SIMXEN=$1 MTRACED=$2 CAT=$3 GUEST=$4 CTF=$5 CHECK=$6
. "$(dirname "$0")/lib-sim.sh"

want=$(python3 "$(dirname "$CHECK")/ctf_reader.py" "$CTF" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
start_chain 50
"$SIMXEN" -d "$dir/xen" create --name mirage-net --log "$dir/guest.log" -- \
	"$GUEST" --file "$(readlink -f "$CTF")" >/dev/null || fail "create"
count() { [ "$(grep -c '"type":"event"' "$dir/cat.jsonl")" -ge "$want" ]; }
wait_for count || fail "fewer than $want events arrived"
# a few more polls and statistics: nothing more may arrive
sleep 1
python3 "$CHECK" --cat "$dir/cat.jsonl" "$CTF" || fail "stream differs from the reference"
