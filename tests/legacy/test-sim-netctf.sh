#!/bin/bash
# net.ctf served by a simulated legacy guest (one read-only grant per page, refs in
# data/mprof/ring-ref): mtraced must stream exactly the events the independent reader
# (ctf_reader.py) finds in the file, marked legacy, nothing lost or corrupt.
. "$MTRACE_SRC/tests/rig.sh"
CTF=$HERE/fixtures/net.ctf

want=$(python3 "$HERE/ctf_reader.py" "$CTF" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
sim_start
daemon_start --set mprof_poll_ms=50
"$CAT" -s "$SOCK" -f json --stats 200 >"$T/cat.jsonl" 2>"$T/cat.err" &
PIDS+=($!)
sleep 0.3
guest mirage-net -- "$MPROF_GUEST" --file "$CTF" >/dev/null
count() { [ "$(grep -c '"type":"event"' "$T/cat.jsonl")" -ge "$want" ]; }
wait_until 40 count || fail "fewer than $want events arrived"
# a few more polls and statistics: nothing more may arrive
sleep 1
python3 "$HERE/check_netctf.py" --cat "$T/cat.jsonl" "$CTF" || fail "stream differs from the reference"
