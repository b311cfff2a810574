#!/bin/bash
# A guest cannot rename itself: the simulated xenstored refuses a guest's write to the
# toolstack's nodes (name, domid) as xenstored's permissions do on real Xen, and
# mtraced takes a name only from a node the guest cannot write (it checks the node's
# permissions): a name node the guest owns is not believed (domain-<id>).  Before: a
# guest renaming itself "ref" was shown, and streamed to "-d ref" clients, as "ref".
. "$MTRACE_SRC/tests/rig.sh"
: "${TABLE_GUEST:?}" "${CAT:?}"

sim_start
daemon_start
R=$(guest ref -- "$HOSTILE" flood)
E=$(guest evil -- "$TABLE_GUEST" rename ref)
wait_match "$E" events '^[1-9]' 10
sleep 0.5
snap
grep -q "^refused: Permission denied" "$T/evil.log" || fail "the guest could write its name: $(cat "$T/evil.log")"
name_of() { sed -n "s/^dom $1 name=\([^ ]*\) .*/\1/p" "$T/stats"; }
[ "$(name_of "$E")" = evil ] || fail "domain $E is not 'evil'"
"$SIMXEN" --dir "$SIM" xs-read "/local/domain/$E/name" | grep -qx evil || fail "xenstore name changed"
note "the guest's write to its name was refused"
# a -d ref client sees the events of ref only
"$CAT" -s "$SOCK" -D ref -f json -n 2000 --time 5 >"$T/cat.json" 2>/dev/null || true
"$PYTHON" - "$T/cat.json" "$R" <<'PY' || fail "-d ref: not only ref's events"
import json, sys
doms = {}
for line in open(sys.argv[1]):
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if "domid" in m and m.get("type", m.get("kind", "")) not in ("stats",):
        doms[m["domid"]] = doms.get(m["domid"], 0) + 1
print("# -d ref: records by domain %s" % doms)
sys.exit(0 if doms and set(doms) == {int(sys.argv[2])} else 1)
PY
# a name node the guest owns (the toolstack took it away, the guest made its own)
"$SIMXEN" --dir "$SIM" xs-rm "/local/domain/$E/name"
for _ in $(seq 50); do grep -q "^written" "$T/evil.log" && break; sleep 0.1; done
grep -q "^written" "$T/evil.log" || fail "the guest could not create a name of its own"
for _ in $(seq 50); do snap; [ "$(name_of "$E")" = "domain-$E" ] && break; sleep 0.1; done
[ "$(name_of "$E")" = "domain-$E" ] || fail "domain $E is called '$(name_of "$E")'"
note "a name the guest owns is not believed: domain-$E"
# a domain being destroyed loses its nodes while mtraced reads them: a name once
# believed stays its name when its node is gone or its permissions cannot be read, to
# the domain_down its -d clients follow.  Before: a name read just before its node went
# made the domain domain-<id> as it died (a -d NAME client missed its domain_down).
K=$(guest keeper -- "$HOSTILE" flood)
wait_match "$K" events '^[1-9]' 10
"$CAT" -s "$SOCK" -D keeper -f json --no-events --stats 1000 --time 20 >"$T/keeper.json" 2>"$T/keeper.err" &
KCAT=$!
PIDS+=("$KCAT")
wait_clients 1 || fail "keeper client: $(cat "$T/keeper.err")"
"$SIMXEN" --dir "$SIM" xs-rm "/local/domain/$K/name"
# the removal fires the watch evil's own name write fired above: a refresh reads no name
sleep 1
snap
[ "$(name_of "$K")" = keeper ] || fail "domain $K lost its name to '$(name_of "$K")'"
"$SIMXEN" --dir "$SIM" destroy "$K" >/dev/null || fail "destroy $K"
wait_until 10 grep -q "\"type\":\"domain_down\",\"domid\":$K," "$T/keeper.json" ||
	fail "the -D keeper client got no domain_down: $(tail -3 "$T/keeper.json")"
kill -INT "$KCAT"
note "a believed name stays when its node goes: domain_down reached -D keeper"
alive
daemon_stop
