#!/bin/bash
# Connections that send Hello and then nothing cannot lock other clients out: two uids
# holding their 32 places each with Hello-only connections (the default max_clients 64,
# max_clients_per_uid 32) are closed with an Error (TIMEOUT) once client_hello_ms has
# passed again without a Subscribe, their places given back: a third uid's client is
# served, and the first uid can connect again.  Before: the Hello deadline stopped at
# the Hello, the 64 connections kept their places for ever and every other client was
# refused with TOO_MANY_CLIENTS.
. "$MTRACE_SRC/tests/rig.sh"
HC="$RELIAB_DIR/hostile-client.py"
command -v setpriv >/dev/null || { echo "SKIP: no setpriv"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (other uids)"; exit 77; }

sim_start
daemon_start --set client_hello_ms=1500
chmod 0777 "$T"
chmod 0666 "$SOCK"
# the other uids run copies: a clone under root's 0700 home is not theirs to read
cp "$HC" "$RELIAB_DIR/../lib/protowire.py" "$T/"
cp "$MTRACED_PROBE" "$T/mtraced-probe"
chmod 0755 "$T/hostile-client.py" "$T/protowire.py" "$T/mtraced-probe"
HC=$T/hostile-client.py
for u in 65534 65533; do
	setpriv --reuid=$u --regid=$u --clear-groups "$PYTHON" "$HC" silent "$SOCK" 32 8 hello \
		>"$T/hello-$u.out" 2>&1 &
	PIDS+=("$!")
	eval "H$u=\$!"
done
sleep 0.6
# every place is taken now; root's client must be served once the deadline frees them
t0=$SECONDS
served=
for _ in $(seq 80); do
	if timeout 5 "$MTRACED_PROBE" -s "$SOCK" stats >"$T/stats" 2>"$T/probe.err"; then
		served=1
		break
	fi
	sleep 0.1
done
[ -n "$served" ] || fail "another uid locked out by 64 Hello-only connections: $(cat "$T/probe.err")"
note "another uid served after $((SECONDS - t0)) s beside 64 Hello-only connections"
wait "$H65534" "$H65533"
for u in 65534 65533; do
	cat "$T/hello-$u.out"
	grep -q "^refused 0" "$T/hello-$u.out" || fail "uid $u: refused at once: $(head -1 "$T/hello-$u.out")"
	grep -q "^closed 32 open 0 errors 30:32" "$T/hello-$u.out" ||
		fail "uid $u: Hello-only connections not closed with TIMEOUT: $(tail -1 "$T/hello-$u.out")"
done
# the places are given back: the same uid is admitted again
setpriv --reuid=65534 --regid=65534 --clear-groups timeout 5 "$T/mtraced-probe" -s "$SOCK" stats \
	>/dev/null 2>"$T/probe.err" || fail "uid 65534 not admitted again: $(cat "$T/probe.err")"
note "64 Hello-only connections closed with TIMEOUT; their uid admitted again"
# A frame half-sent at the deadline defers it once (the frame's own error is truer): a
# client that keeps one half-sent across every deadline still goes, hello_ms + 5 s on.
"$PYTHON" "$HC" drip "$SOCK" 1500 14 >"$T/drip.out" 2>&1
cat "$T/drip.out"
grep -qE "^closed after [0-7]\.[0-9] s errors 30:1$" "$T/drip.out" ||
	fail "a client half-sending a Ping at every deadline was not closed with TIMEOUT by 8 s: $(cat "$T/drip.out")"
alive
daemon_stop
