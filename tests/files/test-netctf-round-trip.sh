#!/bin/bash
# The round trip of a real 2014 mirage-profile trace: net.ctf shared by a simulated
# legacy guest (mtrace-mprof-guest), read by mtraced, written by mtrace-cat -f ctf, read
# by babeltrace2: the same events as net.ctf itself (read by tests/legacy/ctf_reader.py,
# an independent reader): times (CTF's are on the host timeline: less the domain's
# clock_offset, net.ctf's own), ops, threads, fields, strings, thread types, in order.
# The same capture as Chrome JSON passes the structural checker.
. "$MTRACE_SRC/tests/rig.sh"
"$PYTHON" -c 'import bt2' 2>/dev/null || fail "$PYTHON has no bt2 (python3-bt2)"
NETCTF=$MTRACE_SRC/tests/legacy/fixtures/net.ctf
want=$("$PYTHON" "$HERE/../legacy/ctf_reader.py" "$NETCTF" |
	"$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["events"])')
sim_start
daemon_start --set mprof_poll_ms=50
"$CAT" -s "$SOCK" -f ctf -O "$T/ctf" 2>"$T/ctf.err" &
CTF_PID=$!
PIDS+=($CTF_PID)
"$CAT" -s "$SOCK" -f json -O "$T/net.jsonl" -w "$T/net.mtr" 2>"$T/json.err" &
JSON_PID=$!
PIDS+=($JSON_PID)
"$CAT" -s "$SOCK" -f ctf -O "$T/killed" 2>"$T/killed.err" &
KILLED_PID=$!
PIDS+=($KILLED_PID)
sleep 0.3
guest mirage-net -- "$MPROF_GUEST" --file "$(readlink -f "$NETCTF")" >/dev/null
for _ in $(seq 200); do
	[ "$(grep -c '"type":"event"' "$T/net.jsonl" 2>/dev/null)" -ge "$want" ] && break
	sleep 0.1
done
sleep 0.5	# a few more polls: nothing more may come
kill -TERM "$CTF_PID" "$JSON_PID"
kill -KILL "$KILLED_PID"
wait_pid "$CTF_PID" 10 || fail "mtrace-cat -f ctf exited $?"
wait_pid "$JSON_PID" 10 || fail "mtrace-cat -f json exited $?"
babeltrace2 "$T/ctf" >"$T/bt.txt" 2>"$T/bt.err" || fail "babeltrace2 exited $?"
[ -s "$T/bt.err" ] && { head "$T/bt.err"; fail "babeltrace2 wrote to stderr"; }
[ "$(wc -l <"$T/bt.txt")" -eq "$want" ] || fail "babeltrace2 reads $(wc -l <"$T/bt.txt") events, net.ctf has $want"
"$PYTHON" - "$T/ctf" "$NETCTF" "$HERE" <<'PY' || fail "babeltrace2's events differ from net.ctf's"
import os, sys
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(sys.argv[3], "..", "legacy"))
sys.path.insert(0, sys.argv[3])
import check_ctf, ctf_reader
per, env = check_ctf.from_bt2(sys.argv[1])
got = []
for k, v in per.items():	# CTF's clock is the host timeline: net.ctf's own times back
    off = int(env.get("clock_offset_%d" % int(k.split("-")[0][3:]), "0"))
    for e in v:
        e["ts"] -= off
        got.append(e)
want = list(ctf_reader.events(open(sys.argv[2], "rb").read()))
for e in want:	# ctf_reader: "arg" 0 where an op has none; "str" replaced-decoded
    if e["op"] in ("label", "switch"):
        e["arg"] = 0
if len(got) != len(want):
    sys.exit("babeltrace2: %d events, net.ctf %d" % (len(got), len(want)))
for i, (g, w) in enumerate(zip(got, want)):
    if g != w:
        sys.exit("event %d differs:\n babeltrace2 %s\n net.ctf     %s" % (i, g, w))
print("net.ctf round trip: %d events equal" % len(got))
PY
"$PYTHON" "$HERE/check_ctf.py" mtv "$T/ctf" "$T/net.jsonl" || fail "mtv layout differs"
# A capture killed with SIGKILL still opens: the metadata is written as domains come,
# every whole packet is there (only the last, partial one of each stream is lost).
babeltrace2 "$T/killed" >"$T/killed.txt" 2>"$T/killed.bterr" || fail "killed: babeltrace2 exited $?"
[ -s "$T/killed.bterr" ] && { head "$T/killed.bterr"; fail "killed: babeltrace2 wrote to stderr"; }
n=$(wc -l <"$T/killed.txt")
[ "$n" -gt 0 ] && [ "$n" -lt "$want" ] || fail "killed: babeltrace2 reads $n events of $want"
cmp "$T/killed.txt" <(head -n "$n" "$T/bt.txt") || fail "killed: not the first $n events"
pass "a capture killed with SIGKILL opens: its first $n events of $want"
"$CAT" -i "$T/net.mtr" -f chrome -O "$T/net.json" || fail "-i -f chrome"
"$PYTHON" "$HERE/check_chrome.py" "$T/net.json" "$T/net.jsonl" || fail "chrome check"
pass "net.ctf -> legacy guest -> mtraced -> -f ctf -> babeltrace2: $want events equal"
