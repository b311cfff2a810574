#!/bin/bash
# Socket activation: given a listening socket by systemd (LISTEN_FDS), the server serves
# it and creates no socket of its own.
. "$MTRACE_SRC/tests/rig.sh"
command -v systemd-socket-activate >/dev/null || { echo "no systemd-socket-activate"; exit 77; }

systemd-socket-activate -l "$SOCK" -- "$HARNESS" -s "$T/own.sock" -N 100000000 -r 1000 \
	-D 1 -R 1 >"$T/harness.json" 2>"$T/harness.err" &
PIDS+=($!)
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
out=$(timeout 10 "$PROBE" -s "$SOCK" -P 11 -T 1)
echo "$out" | grep -q '^pong 11' || fail "no answer through the activated socket: $out"
[ ! -e "$T/own.sock" ] || fail "the server made its own socket although it was given one"
timeout 10 "$PROBE" -s "$SOCK" -P 12 -T 1 | grep -q '^pong 12' || fail "second client"
pass "socket-activated descriptor served; no socket of its own"
