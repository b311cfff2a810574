#!/bin/bash
# Connections that never send Hello cannot lock other clients out: one uid holds at
# most max_clients_per_uid of the max_clients places (the rest of its connections are
# refused with TOO_MANY_CLIENTS), and a connection without a Hello within
# client_hello_ms gets an Error (TIMEOUT) and is closed.  A client of another uid is
# served at once, whatever the first one does.  Before: 64 silent connections took
# every place, for ever.
. "$MTRACE_SRC/tests/rig.sh"
HC="$RELIAB_DIR/hostile-client.py"
command -v setpriv >/dev/null || { echo "SKIP: no setpriv"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (a second uid)"; exit 77; }

sim_start
NEW=(--set max_clients_per_uid=8 --set client_hello_ms=1500)
[ -n "${RELIAB_OLD:-}" ] && NEW=()
daemon_start --set max_clients=16 "${NEW[@]}"
chmod 0777 "$T"
chmod 0666 "$SOCK"
# 64 silent connections from uid 65534, which may not read the checkout (a clone in
# root's 0700 home): it runs a copy in $T.
cp "$HC" "$RELIAB_DIR/../lib/protowire.py" "$T/" && chmod 0644 "$T/hostile-client.py" "$T/protowire.py"
setpriv --reuid=65534 --regid=65534 --clear-groups "$PYTHON" "$T/hostile-client.py" silent "$SOCK" 64 4 \
	>"$T/silent.out" 2>&1 &
HS=$!
PIDS+=("$HS")
sleep 0.6
# root's client is served while they hold their places
timeout 5 "$MTRACED_PROBE" -s "$SOCK" stats >"$T/stats" 2>"$T/probe.err" ||
	fail "a client of another uid was locked out: $(cat "$T/probe.err")"
note "another uid served while 64 silent connections were open"
wait "$HS"
cat "$T/silent.out"
refused=$(sed -n 's/^refused \([0-9]*\)/\1/p' "$T/silent.out")
[ "$refused" = 56 ] || fail "refused $refused of 64 silent connections, expected 56 (8 per uid)"
grep -q "^closed 8 open 0 errors 30:8" "$T/silent.out" ||
	fail "silent connections not closed with a TIMEOUT error: $(tail -1 "$T/silent.out")"
note "8 admitted, 56 refused, the 8 closed at the Hello deadline with TIMEOUT"
n=$(grep -c "refused" "$DLOG")
[ "$n" -le 2 ] || fail "$n log lines for refused connections"
alive
daemon_stop
