#!/bin/bash
# Malformed, oversized, truncated and out-of-order requests get an Error with the right
# code and the connection closes; a client gone mid-frame just goes; the client cap
# refuses extra clients; through all of it the server keeps serving a well-behaved client.
. "$MTRACE_SRC/tests/rig.sh"

start_harness -N 100000000 -r 2000 -D 2 -R 1 -m 6 -w 1

# A well-behaved client for the whole run: it must get everything at the end.
"$CAT" -s "$SOCK" -f count --summary >/dev/null 2>"$T/good.sum" &
GOOD=$!
PIDS+=("$GOOD")

probe() {	# expected-first-line-pattern expected-last-line-pattern args...
	local want=$1 last=$2 out
	shift 2
	out=$(timeout 20 "$PROBE" -s "$SOCK" -T 10 "$@") || fail "probe $* exited $?"
	echo "$out" | grep -qE "$want" || { echo "$out" >&2; fail "probe $*: no '$want'"; }
	echo "$out" | tail -2 | head -1 | grep -qE "$last" ||
		{ echo "$out" >&2; fail "probe $*: did not end with '$last'"; }
}

# Error codes: 1 BAD_FRAME, 2 TOO_LARGE, 3 BAD_REQUEST, 4 VERSION, 5 TOO_MANY_CLIENTS.
probe '^error 1 malformed length' '^eof' -x ffffffffffffffffffffff
pass "malformed length prefix"
probe '^error 2 request of 1048576 bytes' '^eof' -x 80804000
pass "oversized frame"
# A 3-byte frame whose Hello claims 5 bytes: truncated inside the message.
probe '^error 1 request does not decode' '^eof' -x 030a0508
pass "truncated message"
# A frame announced as 10 bytes of which 3 ever come.
probe '^error 1 truncated frame' '^eof' -x 0a0a0108
pass "frame never completed"
# The same frame begun a second after the Hello: the handshake's deadline (5 s) runs out
# first, and the truer error is still the frame's (1 s later), never a race of the two.
probe '^error 1 truncated frame' '^eof' -w 1000 -x 0a0a0108
pass "frame never completed, begun late in the handshake"
probe '^error 4 protocol version 2' '^eof' -H -x 040a020802
pass "wrong protocol version"
probe '^error 3 Subscribe before Hello' '^eof' -H -S
pass "subscribe before hello"
# Subscribe{stats_interval_ms: 50}
probe '^error 3 bad Subscribe: stats_interval_ms' '^eof' -x 0412023032
pass "bad subscribe"
probe '^error 3 empty or unknown request' '^eof' -x 00
pass "empty request"
probe '^pong 42' '^timeout' -P 42 -T 1
pass "ping"

# Gone mid-frame, several times, then the daemon still answers.
for i in 1 2 3; do
	timeout 10 "$PROBE" -s "$SOCK" -x 0a0a0108 -c >/dev/null || fail "mid-frame probe"
	timeout 10 "$PROBE" -s "$SOCK" -S -x 14 -c >/dev/null || fail "mid-frame probe 2"
done
probe '^pong 7' '^timeout' -P 7 -T 1
pass "clients gone mid-frame"

# The cap: 6 clients (the good one plus 5 holders), the 7th is refused with a reason.
HOLD=()
for i in 1 2 3 4 5; do
	"$PROBE" -s "$SOCK" -T 4 >/dev/null &
	HOLD+=($!)
	PIDS+=($!)
done
sleep 0.5
out=$(timeout 10 "$PROBE" -s "$SOCK" -T 1) && fail "7th client accepted: $out"
echo "$out" | grep -q "refused the connection: too many clients" || fail "7th: $out"
for p in "${HOLD[@]}"; do wait_pid "$p" 10; done
# The daemon sees the holders go on its next loop turn.
for i in $(seq 50); do
	timeout 10 "$PROBE" -s "$SOCK" -T 1 -P 9 | grep -q '^pong 9' && break
	sleep 0.1
done
probe '^pong 9' '^timeout' -P 9 -T 1
pass "client cap"

# Stop the generator: the harness ends as if done and says Goodbye.
kill -TERM "$HPID"
wait_pid "$GOOD" 30 || fail "good client exited $?"
wait_pid "$HPID" 10
sum=$(tail -1 "$T/good.sum")
python3 - "$T/harness.json" "$sum" <<'EOF' || fail "good client: $sum"
import json, sys
h = json.load(open(sys.argv[1]))
s = json.loads(sys.argv[2])
sys.exit(0 if s["events"] == h["events"] and s["dropped_for_client"] == 0 and s["goodbye"] else 1)
EOF
pass "the well-behaved client got every event"
