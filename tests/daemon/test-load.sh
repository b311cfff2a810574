#!/bin/bash
# mtrace-load, the project's workload guest, against its own JSON summary: every event
# it wrote is decoded and counted (total, per label), streamed exactly once per op to a
# client (mtrace-cat), nothing lost or corrupt; a garbage-writing mtrace-load next to it
# is counted as corrupt and changes nothing for the others.  A guest writing more
# distinct labels than mtraced keeps (max_labels_per_guest, 8 here): each of its label
# events past the cap is one labels_dropped, every thread it labelled is one
# threads_labelled, and mtrace-cat -f json, mtrace-top -b and mtrace-exporter show both
# (before: threads labelled by a dropped label were not counted, and no client but the
# exporter showed the drops).
. "$MTRACE_SRC/tests/rig.sh"
: "${LOAD:?}" "${CAT:?}" "${TOP:?}" "${EXPORTER:?}"
CAP=8

sim_start
daemon_start --set max_labels_per_guest=$CAP
"$CAT" -s "$SOCK" -f count --summary -D a -D b -D c --time 120 2>"$T/cat.json" &
CAT_PID=$!
PIDS+=("$CAT_PID")
# a's creations, to check that its rings create threads of their own
"$CAT" -s "$SOCK" -f json -D a -o creates --time 120 >"$T/creates.json" 2>/dev/null &
CR_PID=$!
PIDS+=("$CR_PID")
# the label events of the guest past the cap: the threads it labelled
"$CAT" -s "$SOCK" -f json -D many-labels -o label --time 120 >"$T/labels.json" 2>/dev/null &
LB_PID=$!
PIDS+=("$LB_PID")
sleep 0.3
# flat out, rings big enough to hold everything: the counts must be exact
A=$(guest a --preserve-poweroff -- "$LOAD" --rings 2 -p 128 -n 8000 --labels 3 --counters 2 --seed 7 --wait-reader 10 --linger 10)
B=$(guest b --preserve-poweroff -- "$LOAD" --rings 1 -p 16 --garbage mixed --duration 3 --rate 20000)
# c stamps raw TSC ticks where the TSC is invariant: mtraced converts them at decode
CCLOCK=monotonic
grep -qw nonstop_tsc /proc/cpuinfo 2>/dev/null && CCLOCK=tsc
C=$(guest c --preserve-poweroff -- "$LOAD" --rings 4 -p 64 -n 3000 --labels 5 --seed 9 --wait-reader 10 --linger 10 \
	--clock "$CCLOCK")
# 20 distinct labels, past the cap of 8; each new thread labelled once.  It holds on
# (alive: the exporter shows only running guests) until the end.
M=$(guest many-labels -- "$LOAD" --rings 2 -p 128 -n 6000 --labels 20 --seed 11 \
	--wait-reader 10 --linger 10 --hold)
EA=$(json_events a); EC=$(json_events c); EM=$(json_events many-labels)
note "mtrace-load a wrote $EA events, c $EC, many-labels $EM"
wait_field "$A" events "$EA" 20
wait_field "$C" events "$EC" 20
wait_field "$M" events "$EM" 20
note "a, c and many-labels counted exactly"
wait_match "$B" corrupt '^[1-9]' 20
snap
for d in $A $C $M; do
	[ "$(field $d lost)" = 0 ] && [ "$(field $d corrupt)" = 0 ] && [ "$(field $d unknown)" = 0 ] ||
		fail "domain $d: lost/corrupt/unknown"
done
# label counts as the guest wrote them
"$PYTHON" - "$T/a.log" "$T/stats" "$A" <<'PY' || fail "label counts differ"
import json, sys
want = json.load(open(sys.argv[1]))["labels"]
got = {}
for line in open(sys.argv[2]):
    f = line.split()
    if f and f[0] == "label" and f[1] == sys.argv[3]:
        got[f[2]] = int(f[3].split("=")[1])
if got != want:
    print("labels: guest wrote %s, daemon counted %s" % (want, got))
    sys.exit(1)
PY
note "labels checked"
# Past the cap.  The figures, from what mtrace-load says it wrote and the label events
# streamed; then as mtrace-cat -f json, mtrace-top -b and mtrace-exporter show them.
NL=$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["per_op"]["label"])' "$T/many-labels.log")
wait_until 10 test "$(grep -c '"op":"label"' "$T/labels.json")" = "$NL" ||
	fail "many-labels wrote $NL label events, $(grep -c '"op":"label"' "$T/labels.json") streamed"
kill -TERM "$LB_PID"
wait "$LB_PID"
"$CAT" -s "$SOCK" -f json --no-events --stats 200 --label-stats -D many-labels -n 1 >"$T/m-stats.json" ||
	fail "mtrace-cat: no statistics"
"$CAT" -s "$SOCK" -f text --no-events --stats 200 -D many-labels -n 1 >"$T/m-stats.txt" ||
	fail "mtrace-cat -f text: no statistics"
"$TOP" -b -n 1 -d 0.2 -s "$SOCK" >"$T/top.out" || fail "mtrace-top -b"
"$EXPORTER" -s "$SOCK" -l 127.0.0.1:0 --interval 200 2>"$T/exporter.log" &
PIDS+=($!)
wait_until 10 grep -q '^mtrace-exporter: listening on http://127.0.0.1:[0-9]*/metrics$' "$T/exporter.log" ||
	fail "mtrace-exporter did not start"
EXP_URL=$(sed -n 's|^mtrace-exporter: listening on \(http://127.0.0.1:[0-9]*/metrics\)$|\1|p' "$T/exporter.log")
"$PYTHON" - "$T/many-labels.log" "$T/labels.json" "$T/m-stats.json" "$T/m-stats.txt" "$T/top.out" \
	"$EXP_URL" "$M" "$CAP" <<'PY' || fail "the figures of a guest past the label cap"
import json, re, sys, time, urllib.request
summ, streamed, stats, stats_text, top, url = sys.argv[1:7]
domid, cap = int(sys.argv[7]), int(sys.argv[8])
bad = []
wrote = json.load(open(summ))["labels"]    # label: label events written
if len(wrote) <= cap:
    sys.exit("mtrace-load wrote %d distinct labels, not past the cap %d" % (len(wrote), cap))
threads, n = set(), 0
for line in open(streamed):
    e = json.loads(line)
    if e.get("type") == "event" and e["op"] == "label" and e["domid"] == domid:
        threads.add(e["thread"])
        n += 1
if n != sum(wrote.values()) or len(threads) != n:
    bad.append("%d label events streamed on %d threads; the guest wrote %d, a thread each"
               % (n, len(threads), sum(wrote.values())))
st = [json.loads(l) for l in open(stats)]
st = [m for m in st if m.get("type") == "stats"][-1]
dom = [d for d in st["domains"] if d["domid"] == domid][0]
kept = {l["label"]: l["count"] for l in st["labels"] if l["domid"] == domid}
if len(kept) != cap or any(wrote.get(k) != v for k, v in kept.items()):
    bad.append("labels kept %s, not %d of those written %s" % (kept, cap, wrote))
dropped = sum(v for k, v in wrote.items() if k not in kept)
labelled = len(threads)
print("many-labels: %d labels written, %d kept; %d label events dropped, %d threads labelled"
      % (len(wrote), len(kept), dropped, labelled))
if dom.get("labels_dropped") != dropped:
    bad.append("mtrace-cat json: labels_dropped %s, expected %d" % (dom.get("labels_dropped"), dropped))
if dom.get("threads_labelled") != labelled:
    bad.append("mtrace-cat json: threads_labelled %s, expected %d" % (dom.get("threads_labelled"), labelled))
# mtrace-cat -f text: the domain's line of its # stats
line = "threads_labelled=%d labels_dropped=%d" % (labelled, dropped)
if not re.search(r"^#  dom=%d .* %s$" % (domid, line), open(stats_text).read(), re.M):
    bad.append("mtrace-cat -f text: no '#  dom=%d ... %s'" % (domid, line))
# mtrace-top -b: a note under the domain rows for this guest only (a and c keep theirs)
notes = re.findall(r"^\((.*), id (\d+): (\d+) label events dropped, past max_labels_per_guest"
                   r" distinct labels\)$", open(top).read(), re.M)
if ("many-labels", str(domid), str(dropped)) not in notes or \
        any(name in ("a", "c") for name, _, _ in notes):
    bad.append("mtrace-top -b notes %s, expected many-labels %d" % (notes, dropped))
# mtrace-exporter: the two counters of the guest, once it has statistics
want = {"mtrace_domain_labels_dropped_total": dropped,
        "mtrace_domain_threads_labelled_total": labelled}
got = {}
for _ in range(100):
    text = urllib.request.urlopen(url, timeout=5).read().decode()
    got = {m.group(1): int(m.group(2)) for m in re.finditer(
        r'^(mtrace_domain_[a-z_]+_total)\{domain="many-labels",domid="%d"\} (\d+)$' % domid,
        text, re.M)}
    if set(want) <= set(got):
        break
    time.sleep(0.1)
if {k: got.get(k) for k in want} != want:
    bad.append("mtrace-exporter: %s, expected %s" % ({k: got.get(k) for k in want}, want))
if bad:
    sys.exit("\n".join(bad))
PY
note "past the label cap: labels_dropped and threads_labelled exact in json, top and exporter"
# Thread ids are the domain's: two rings (vCPUs) never create the same one.  When
# mtrace-load's rings shared one id space, both created thread 65 at about the same
# time, and the label counts above depended on how mtraced interleaved the rings.
kill -TERM "$CR_PID"
wait "$CR_PID"
"$PYTHON" - "$T/creates.json" "$(json_events a)" <<'PY' || fail "a thread id created twice"
import collections, json, sys
by_ring = collections.defaultdict(set)
n = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("op") == "creates":
        by_ring[e["ring"]].add(e["arg"])
        n += 1
if len(by_ring) != 2 or n < int(sys.argv[2]) // 40:
    print("creations: %d over rings %s" % (n, sorted(by_ring)))
    sys.exit(1)
both = by_ring[0] & by_ring[1]
if both:
    print("%d thread ids created on both rings, e.g. %s" % (len(both), sorted(both)[:5]))
    sys.exit(1)
PY
note "each ring creates threads of its own"
"$SIMXEN" --dir "$SIM" destroy "$B" >/dev/null
wait_field "$B" state destroyed 20
sleep 0.5
note "stopping the client"
kill -TERM "$CAT_PID"
wait "$CAT_PID"
# the stream carried every event of a and c once, op by op (b's are its own)
"$PYTHON" - "$T/a.log" "$T/c.log" "$T/cat.json" "$(field "$B" events)" "$MTRACE_SRC/tests/lib" <<'PY' || fail "stream differs"
import json, sys
sys.path.insert(0, sys.argv[5])
from subscribe_model import OPS as ops
want = {}
for p in sys.argv[1:3]:
    for name, n in json.load(open(p))["per_op"].items():
        want[ops[name]] = want.get(ops[name], 0) + n
cat = json.loads(open(sys.argv[3]).read().strip().splitlines()[-1])
got = {int(k): v for k, v in cat["by_op"].items()}
b_events = int(sys.argv[4])
total_want = sum(want.values()) + b_events
if cat["events"] < sum(want.values()) or cat["dropped_for_client"]:
    print("stream: %d events, %d dropped; a + c wrote %d" % (cat["events"], cat["dropped_for_client"], sum(want.values())))
    sys.exit(1)
for op, n in want.items():
    if got.get(op, 0) < n:
        print("op %d: %d streamed, %d written by a + c" % (op, got.get(op, 0), n))
        sys.exit(1)
# what is beyond a + c is b's, no more than the daemon decoded from b
extra = cat["events"] - sum(want.values())
if extra > b_events:
    print("stream: %d events beyond a + c, b decoded only %d" % (extra, b_events))
    sys.exit(1)
PY
alive
daemon_stop
echo "ok: mtrace-load counted exactly"
