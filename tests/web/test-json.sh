#!/bin/bash
# test-json.sh - every JSON output held to docs/json.md (tests/web/json_schema.py), live:
# mtrace-cat -f json, mtrace-web's /events and /api/state, all watching the same guests
# (a guest of hostile strings, an mtrace-load guest).  And the outputs agree: the events
# and strings mtrace-cat printed are the ones the /events batches carried.
. "$(dirname "$0")/lib.sh"
rig_start || fail "the rig did not start"
web_start
SCHEMA=$MTRACE_SRC/docs/json.md
CHECK=$MTRACE_SRC/tests/web/json_schema.py

"$CAT" -s "$RIG_SOCK" -f json --stats 200 --threads 50 --finished --label-stats --site-stats >"$T/cat.jsonl" 2>"$T/cat.err" &
CAT_PID=$!
curl -sN "${WEB_URL}events" >"$T/sse.txt" 2>"$T/curl.err" &
CURL_PID=$!
BG="$CAT_PID $CURL_PID"
wait_until 10 grep -q 'event: hello' "$T/sse.txt" || fail "no hello on /events"
wait_until 10 grep -q '"type":"stats"' "$T/cat.jsonl" || fail "mtrace-cat saw no stats"

hostile=$(rig_guest hostile -- "$RIG_BUILD/tests/web/label-guest" 1) || fail "create hostile"
load=$(rig_guest synthetic -- "$RIG_LOAD" --rings 2 --threads 20 --labels 4 --counters 2 \
	--evtchn 5 --rate 2000 --events 3000) || fail "create synthetic"
note "guests: hostile $hostile, synthetic $load"
down() { [ "$(grep -c '"type":"domain_down"' "$T/cat.jsonl")" -ge 2 ] &&
	[ "$(grep -c '^event: down' "$T/sse.txt")" -ge 2 ]; }
wait_until 60 down || fail "the guests did not end in both outputs"
# one more full stats after they ended, with their threads and labels in it
n=$(grep -c '"type":"stats"' "$T/cat.jsonl")
wait_until 10 eval '[ "$(grep -c "\"type\":\"stats\"" "$T/cat.jsonl")" -gt '"$n"' ]' ||
	fail "no stats after the guests ended"
curl -sf "${WEB_URL}api/state" >"$T/state.json" || fail "GET /api/state"
kill -TERM "$CAT_PID" "$CURL_PID" 2>/dev/null
wait "$CAT_PID" 2>/dev/null
wait "$CURL_PID" 2>/dev/null
BG=
# the last SSE message may be cut by the kill: keep whole ones
"$PYTHON" -c 'import sys; d=open(sys.argv[1],"rb").read(); open(sys.argv[1],"wb").write(d[:d.rfind(b"\n\n")+2])' "$T/sse.txt"

"$PYTHON" "$CHECK" "$SCHEMA" lines "$T/cat.jsonl" || fail "mtrace-cat -f json breaks docs/json.md"
"$PYTHON" "$CHECK" "$SCHEMA" sse "$T/sse.txt" || fail "/events breaks docs/json.md"
"$PYTHON" "$CHECK" "$SCHEMA" state "$T/state.json" || fail "/api/state breaks docs/json.md"

# Coverage, so the check above cannot pass on nothing, and the outputs agree.
"$PYTHON" - "$T/cat.jsonl" "$T/sse.txt" "$T/state.json" "$hostile" "$load" <<'PY' || fail "outputs disagree"
import collections, json, sys
cat = [json.loads(l) for l in open(sys.argv[1], "rb") if l.strip()]
sse = []
for block in open(sys.argv[2], "rb").read().split(b"\n\n"):
    for line in block.split(b"\n"):
        if line.startswith(b"data: "):
            sse.append(json.loads(line[6:]))
state = json.load(open(sys.argv[3], "rb"))
doms = {int(sys.argv[4]), int(sys.argv[5])}
kinds = collections.Counter(o["type"] for o in cat)
for k in ("event", "domain_up", "domain_down", "stats"):
    assert kinds[k], "mtrace-cat printed no %s: %r" % (k, kinds)
skinds = collections.Counter(o["type"] for o in sse)
for k in ("hello", "batch", "domain_up", "domain_down", "stats"):
    assert skinds[k], "/events sent no %s: %r" % (k, skinds)
for k in ("threads", "labels"):
    assert any(o["type"] == "stats" and o[k] for o in cat), "no stats with %s" % k
assert state["stats"] and state["stats"]["domains"], "no stats in /api/state"
# the same events, field for field, in both: (domid, ring, ts, op, thread, arg, str)
a = collections.Counter((o["domid"], o["ring"], o["ts"], o["op_code"], o["thread"], o["arg"],
                         o.get("str")) for o in cat if o["type"] == "event" and o["domid"] in doms)
b = collections.Counter()
for o in sse:
    if o["type"] != "batch" or o["d"] not in doms:
        continue
    ts = int(o["t"])  # dt is each event's step from the one before
    for i in range(len(o["op"])):
        ts += o["dt"][i]
        b[(o["d"], o["r"], ts, o["op"][i], o["th"][i], o["a"][i],
           o["s"][o["si"][i]] if o["si"][i] >= 0 else None)] += 1
assert a == b, "cat and /events differ: %d only in cat, %d only in /events, e.g. %r" % (
    sum((a - b).values()), sum((b - a).values()), list((a - b) or (b - a))[:3])
strs = {k[6] for k in a if k[6] is not None and k[0] == int(sys.argv[4])}
assert any(not s.isprintable() for s in strs), "no hostile string reached the outputs"
assert any("\u2028" in s for s in strs), "U+2028 did not survive as a character"
print("ok: %d events of %d guests the same in mtrace-cat and /events, %d distinct strings "
      "of the hostile guest" % (sum(a.values()), len(doms), len(strs)))
PY
echo "ok: mtrace-cat -f json, /events and /api/state all follow docs/json.md"
exit 0
