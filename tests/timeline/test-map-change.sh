#!/bin/bash
# A change of a guest's map is a record, never a silent jump.  Stepping dom0's
# CLOCK_REALTIME would move every clock of the machine under the other tests (and needs
# CAP_SYS_TIME), so the change comes the other way round, as a migration or a resume
# brings it: the guest's clock-sync announcement (data/mtrace/clock-sync, its ring clock
# and Xen system time read together) changes.  That is the real path -- xenstore, the
# watch, mtraced reading and checking the key, measuring Xen time against its wall
# clock (the simulated Xen's system time is dom0's CLOCK_MONOTONIC), deciding that the
# map moved -- with only the guest's side written here (as dom0, in its place):
#  1. an mtrace-load guest on CLOCK_MONOTONIC announces its clock-sync itself at open
#     (guest/clock-sync.c; on the simulated Xen its ring clock IS Xen time): map 1,
#     xen-system-time, at the offset dom0 measures same-kernel;
#  2. its ring clock announced 10 ms behind Xen time (a migration to a host whose Xen
#     time runs 10 ms ahead): map 2, 10 ms later;
#  3. announcements that are not four bounded decimal numbers are refused and counted
#     (DomainStats.clock_sync_bad), no map made;
#  4. announced 20 ms behind (migrated on again): map 3, 10 ms later again (forward: a
#     step back would have Chrome clamp what falls before the events it already has).
# In mtrace-cat's JSON every event of the guest is at guest ts + the offset of a map
# received before it, the offset changing only where a new map came; Chrome JSON holds
# the three maps in its metadata and nothing clamped (the step is forward).
. "$(dirname "$0")/lib.sh"
DOM=5
KEY=/local/domain/$DOM/data/mtrace/clock-sync

sim_start
daemon_start
record change
"$CAT" -s "$SOCK" -f json --no-events --stats 200 -D load >"$T/stats.jsonl" 2>"$T/stats.err" &
PIDS+=($!)
load_guest load "$DOM" "$T/load.json" --duration 120 --rate 5000
maps() { "$CAT" -i "$T/change.mtr" -f json 2>/dev/null | grep -c '"type":"clock_map","domid":5,'; }
maps_ge() { [ "$(maps)" -ge "$1" ]; }
wait_until 20 maps_ge 1 || fail "no clock map of the guest"
mono() { "$PYTHON" -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))'; }
xsw() { "$SIMXEN" --dir "$SIM" xs-write "$KEY" "$1" || fail "xs-write $1"; }

# events under each map before the next: what a jump would be seen against
events() { "$CAT" -i "$T/change.mtr" -f json 2>/dev/null | grep -c '"type":"event","domid":5,'; }
events_ge() { [ "$(events)" -ge "$1" ]; }
wait_until 20 events_ge 1000 || fail "the guest wrote no events"
m=$(mono)
xsw "1001 $m $((m + 10000000)) 1000"
wait_until 20 maps_ge 2 || fail "the moved announcement made no new map"
note "map 2 after the first announcement"

bad_count() {
	tail -1 "$T/stats.jsonl" | "$PYTHON" -c '
import json, sys
d = [x for x in json.loads(sys.stdin.read() or "{}").get("domains", []) if x["domid"] == 5]
print(d[0]["clock_sync_bad"] if d else -1)'
}
bad_ge() { [ "$(bad_count)" -ge "$1" ]; }
k=0
# one at a time: mtraced reads the key when its watch fires, and writes in a burst are
# read as the last of them
for bad in "2 x 3 4" "1 2 3" "1 2 3 99999999999" "-1 2 3 4" "1  2 3 4" \
	"1 2 3 4 5" "99999999999999999999999 2 3 4" "$(printf '1 2 3 %0200d' 4)"; do
	xsw "$bad"
	k=$((k + 1))
	wait_until 20 bad_ge $k || fail "clock_sync_bad is $(bad_count) after \"$bad\", $k refused"
done
[ "$(maps)" -eq 2 ] || fail "a refused announcement made a map"
pass "8 hostile announcements refused and counted, no map made of them"

n=$(events)
wait_until 20 events_ge $((n + 1000)) || fail "the guest stopped writing"
m=$(mono)
xsw "1003 $m $((m + 20000000)) 1000"
wait_until 20 maps_ge 3 || fail "the second move made no new map"
n=$(events)
wait_until 20 events_ge $((n + 1000)) || fail "the guest stopped writing"
"$SIMXEN" --dir "$SIM" destroy "$DOM" >/dev/null || fail "destroy the guest"
down() { "$CAT" -i "$T/change.mtr" -f json 2>/dev/null | grep -q '"type":"domain_down","domid":5'; }
wait_until 30 down || fail "the recording has no domain_down of the guest"
record_stop
"$CAT" -i "$T/change.mtr" -f json -O "$T/change.jsonl" || fail "-i -f json"
"$PYTHON" - "$T/change.jsonl" <<'PY' || fail "the maps"
import json, sys
maps, events, seen = [], 0, set()
cur = None
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d.get("type") == "clock_map" and d["domid"] == 5:
        maps.append(d)
    if d.get("type") != "event" or d["domid"] != 5:
        continue
    events += 1
    off = d["host_ns"] - d["ts"]
    told = [m["offset_ns"] for m in maps]
    if off not in told:
        sys.exit("event at ts %d mapped by %d, no map told before it (%r)" % (d["ts"], off, told))
    if off != cur:
        seen.add(off)
        cur = off
    # the map in force: the last one whose since (in guest time) the event is at or past
    want = maps[0]
    for m in maps[1:]:
        if d["ts"] >= m["since_host_ns"] - m["offset_ns"]:
            want = m
    if off != want["offset_ns"]:
        sys.exit("event at ts %d mapped by %d, the map in force is %r" % (d["ts"], off, want))
src = [m["source"] for m in maps]
if src != ["xen-system-time"] * 3 or [m["seq"] for m in maps] != [1, 2, 3]:
    sys.exit("maps %r" % maps)
d12 = maps[1]["offset_ns"] - maps[0]["offset_ns"]
d23 = maps[2]["offset_ns"] - maps[1]["offset_ns"]
u = [m["uncertainty_ns"] for m in maps]
if abs(d12 - 10000000) > u[0] + u[1] + 20000:
    sys.exit("the announcement moved 10 ms, the map %d ns (uncertainties %r)" % (d12, u))
if abs(d23 - 10000000) > u[1] + u[2] + 20000:
    sys.exit("the announcement moved 10 ms again, the map %d ns" % d23)
if maps[0]["offset_ns"] not in seen or maps[2]["offset_ns"] not in seen:
    sys.exit("the events used the offsets %r, not the first map's and the last's" % seen)
print("%d events, each at ts + the offset of the map in force, told before it; maps: "
      "the guest's own, then %+d ns, then %+d ns" % (events, d12, d23))
PY
"$CAT" -i "$T/change.mtr" -f chrome -O "$T/change-chrome.json" || fail "-f chrome"
"$PYTHON" - "$T/change-chrome.json" <<'PY' || fail "Chrome's metadata"
import json, sys
meta = json.load(open(sys.argv[1]))["metadata"]["mtrace"]
n = [m["seq"] for m in meta["clocks"] if m["domid"] == 5]
if n != [1, 2, 3] or meta["clamped"]:
    sys.exit("clocks %r, clamped %d" % (meta["clocks"], meta["clamped"]))
print("Chrome JSON: the three maps in its metadata, nothing clamped")
PY
pass "a moved map is a record, and the events follow it"
daemon_stop
