#!/bin/bash
# Out of descriptors: accept fails with EMFILE; the server pauses accepting (instead of
# spinning on the ready listener), keeps serving the clients it has, and takes the waiting
# ones once descriptors are free again.
. "$MTRACE_SRC/tests/rig.sh"

# Few descriptors: the harness needs about 10 of its own, leaving room for ~6 clients.
(ulimit -n 16 && exec "$HARNESS" -s "$SOCK" -N 100000000 -r 1000 -D 1 -R 1 -m 64 \
	>"$T/harness.json" 2>"$T/harness.err") &
HPID=$!
PIDS+=("$HPID")
for _ in $(seq 100); do grep -q "listening on" "$T/harness.err" 2>/dev/null && break; sleep 0.05; done

HOLD=()
for i in $(seq 10); do
	"$PROBE" -s "$SOCK" -T 2 >"$T/hold$i.out" &
	HOLD+=($!)
	PIDS+=($!)
done
for p in "${HOLD[@]}"; do wait_pid "$p" 30; done
grep -q "accept: Too many open files: pausing" "$T/harness.err" ||
	fail "the descriptor limit was never hit: the test did not test anything"
ok=$(grep -l '^hello' "$T"/hold*.out | wc -l)
[ "$ok" -eq 10 ] || { cat "$T"/hold*.out >&2; fail "only $ok of 10 clients were served"; }
# The server is still alive and answering.
timeout 10 "$PROBE" -s "$SOCK" -P 5 -T 1 | grep -q '^pong 5' || fail "no answer after EMFILE"
kill -0 "$HPID" || fail "harness died"
pass "EMFILE: accept paused, every waiting client served afterwards"
