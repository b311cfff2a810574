#!/bin/bash
# One uid's clients cannot take every shared-memory region (issue 36 #11): with the
# default settings (client_shm_total 64M, client_shm_bytes 8M: room for 7 regions),
# root opens 8 connections of 8 distinct filters that all ask for shared memory and
# keep their regions; then a client of another uid (nobody, through setpriv: a real
# uid that mtraced reads with SO_PEERCRED) asks for one and gets it.  Root's own
# connections get at most its share (client_shm_per_uid, by default half of
# client_shm_total) and the rest are told why and use the socket.  Before: root's
# connections took all 7 regions and the other uid was refused ("client_shm_total
# reached").
. "$MTRACE_SRC/tests/rig.sh"
# uid 65534 may not read the checkout (a clone in root's 0700 home): a copy for all, in a
# directory it may list (Python's import lists the directory; $T is 0711 below)
mkdir -m 0755 "$T/py" && cp "$HERE/shm_client.py" "$HERE/../lib/protowire.py" "$T/py/" &&
	chmod 0644 "$T/py/shm_client.py" "$T/py/protowire.py" || fail "copy shm_client.py"
SHM=$T/py/shm_client.py
NOBODY=65534

command -v setpriv >/dev/null || { echo "no setpriv: skipped"; exit 77; }
# the other uid reaches the socket through its group and a directory it may cross
GROUP=$(getent group "$NOBODY" | cut -d: -f1)
[ -n "$GROUP" ] || { echo "no group $NOBODY: skipped"; exit 77; }
chmod 0711 "$T"
sim_start
daemon_start --set socket_group="$GROUP"

"$PYTHON" "$SHM" take "$SOCK" 8 1000 >"$T/root.out" 2>"$T/root.err" &
PIDS+=($!)
wait_until 20 grep -q '^ready' "$T/root.out" || fail "root's client: $(cat "$T/root.err")"
sed 's/^/# root: /' "$T/root.out"
mine=$(grep -c '^region' "$T/root.out")
[ "$mine" -ge 1 ] || fail "root's client got no region at all"

setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups \
	"$PYTHON" "$SHM" take "$SOCK" 1 2000 >"$T/other.out" 2>"$T/other.err" &
PIDS+=($!)
wait_until 20 grep -q '^ready' "$T/other.out" || fail "the other uid's client: $(cat "$T/other.err")"
sed 's/^/# uid 65534: /' "$T/other.out"
grep -q "uid $NOBODY" "$DLOG" || fail "mtraced did not see uid $NOBODY"
grep -q '^region 0 ' "$T/other.out" ||
	fail "root's $mine regions left none for another uid: $(cat "$T/other.out")"
pass "root's 8 filters got $mine regions; uid $NOBODY still got one"
[ "$mine" -le 3 ] || fail "root took $mine regions, its share (32M of 8M regions) is 3"
grep -q '^refused [0-9]* client_shm_per_uid reached' "$T/root.out" ||
	fail "root's refused connections were not told why"
pass "root held to its share, the others told why"
daemon_stop
