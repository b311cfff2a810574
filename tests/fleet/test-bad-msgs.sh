#!/bin/bash
# Messages in the stream that mtrace-ship could not have published (issue 36, #1 #5 #6):
# anyone allowed to publish on mtrace.> can store them.  Three rounds of every malformed
# kind (js_bad.py: empty, truncated, lying lengths, two frames, garbage, valid frames of
# a kind not published there, huge, a Stats that unpacks 100 times its size, subjects
# mtrace-ship does not make, host tokens that would alias h1: h%31, h1%00zz) are stored
# before, while and after h1 ships a guest's events.  A followed reader, a replay and
# mtrace-web each go on past every one of them, count them exactly per host (the
# aliases under no host, never as h1) and keep every event of h1; then two valid Loss
# notices of 2^63 must saturate the summary's dropped count, not wrap it.
. "$(dirname "$0")/../rig.sh"
. "$HERE/lib.sh"
: "${WEB:?}"

N=20000
# the huge kind is 5 MiB: past mtraced's frames, within what this server takes
echo "max_payload: 8MB" >"$T/nats.conf"
NATS_CONF=$T/nats.conf nats_start
"$PYTHON" "$HERE/js_forge.py" "$NATS_PORT" - create || fail "cannot create the stream"
host_up h1
ship h1 --stats 0
host_clients h1 1

"$CAT" --nats "$NATS_URL" --follow --from-start -f json --summary >"$T/follow.json" \
	2>"$T/follow.err" &
FOLLOW=$! FOLLOW_START=$SECONDS
PIDS+=("$FOLLOW")
"$PYTHON" "$HERE/js_bad.py" "$NATS_PORT" round >"$T/want" || fail "round 1 not stored"
host_guest h1 load --domid 11 -- "$LOAD" --wait-reader 10 --linger 5 \
	--summary "$T/h1/load.json" -n $N --rate 5000 >/dev/null
"$PYTHON" "$HERE/js_bad.py" "$NATS_PORT" round >/dev/null || fail "round 2 not stored"
host_idle h1
ship_settled h1
"$PYTHON" "$HERE/js_bad.py" "$NATS_PORT" round >/dev/null || fail "round 3 not stored"
# the last message: a valid Loss of 4242 on h2, which the follower prints
"$PYTHON" -c 'import sys; sys.path.insert(0, sys.argv[1]); import js_bad
n = js_bad.Nats(sys.argv[2], "-"); js_bad.publish(n, "mtrace.h2._.events", js_bad.loss(4242))' \
	"$HERE" "$NATS_PORT" || fail "the last message not stored"
wait_growing "the follower's last message" 30 120 "$T/follow.json" \
	grep -q '"dropped_for_client":4242' "$T/follow.json"
kill -TERM "$FOLLOW"
FOLLOW_END=$SECONDS
wait_pid "$FOLLOW" 20 || fail "the follower exited with an error: $(tail -3 "$T/follow.err")"
"$CAT" --nats "$NATS_URL" -f count --summary >/dev/null 2>"$T/replay.err" ||
	fail "the replay exited with an error: $(tail -3 "$T/replay.err")"

want=$(grep -o '"events": *[0-9]*' "$T/h1/load.json" | head -1 | grep -o '[0-9]*$')
# what each reader must have counted: three rounds
"$PYTHON" - "$T/want" "$want" "$T/follow.err" "$T/replay.err" <<'PY' || fail "the counts"
import json, sys
per_round = json.load(open(sys.argv[1]))
want = {h: 3 * n for h, n in per_round.items()}
events = int(sys.argv[2])
for name, path in (("follower", sys.argv[3]), ("replay", sys.argv[4])):
    lines = [l for l in open(path, errors="replace") if l.startswith('{"events"')]
    if not lines:
        sys.exit("%s: no summary: %s" % (name, open(path, errors="replace").read()[-500:]))
    s = json.loads(lines[-1])
    bad = s.get("bad_messages")
    if not bad:
        sys.exit("%s: no bad_messages in the summary: %s" % (name, lines[-1][:300]))
    got = dict(bad["hosts"])
    got[""] = bad["unknown_host"]
    if got != want or bad["total"] != sum(want.values()):
        sys.exit("%s: bad messages %s (total %d), expected %s" % (name, got, bad["total"], want))
    if s["events"] + s["lost_in_ring"] != events:
        sys.exit("%s: %d events (+ %d lost in the ring) of %d" % (name, s["events"], s["lost_in_ring"], events))
    # the aliases' Loss of 7 are not read as h1's; the last message's 4242 is
    if s["dropped_for_client"] != 4242:
        sys.exit("%s: dropped_for_client %d, expected 4242" % (name, s["dropped_for_client"]))
    print("# %s: %d events, bad %s" % (name, s["events"], got))
PY
# rate-limited: the first one, a summary every 10 s while they come, one at the end
lines=$(grep -c 'skipped' "$T/follow.err")
[ "$lines" -le $(( (FOLLOW_END - FOLLOW_START) / 10 + 2 )) ] ||
	fail "the follower said $lines lines of skipped messages in $((FOLLOW_END - FOLLOW_START)) s"
note "the follower's log: $lines lines for 60 messages skipped: $(grep skipped "$T/follow.err" | tail -1)"

# mtrace-web reads the stream from its start past the same messages
"$WEB" --nats "$NATS_URL" --from-start -l 127.0.0.1:0 --no-token >"$T/web.out" 2>"$T/web.err" &
WEBPID=$!
PIDS+=("$WEBPID")
wait_until 20 grep -q 'serving http' "$T/web.out" || fail "mtrace-web did not start"
WEB_URL=$(sed -n 's|^mtrace-web: serving \(http://[^ ]*/\).*|\1|p' "$T/web.out")
cat >"$T/web_check.py" <<'PY'
import json, sys, urllib.request
s = json.load(urllib.request.urlopen(sys.argv[1], timeout=10))
want = {h: 3 * n for h, n in json.load(open(sys.argv[2])).items()}
bad = s["web"].get("bad_messages") or {}
got = dict(bad.get("hosts", {}))
got[""] = bad.get("unknown_host")
hosts = {h["host"]: h for h in s["hosts"]}
# the aliases h%31 and h1%00zz are no host at all
ok = got == want and s["web"]["events_in"] == int(sys.argv[3]) and sorted(hosts) == ["h1", "h2"]
open(sys.argv[2] + ".web", "w").write("bad %s, events %d, hosts %s\n" % (got, s["web"]["events_in"], sorted(hosts)))
sys.exit(0 if ok else 1)
PY
wait_until 60 "$PYTHON" "$T/web_check.py" "${WEB_URL}api/state" "$T/want" "$want" ||
	fail "mtrace-web's /api/state: $(cat "$T/want.web" 2>/dev/null), expected $(cat "$T/want") x3 and $want events"
note "mtrace-web: $(cat "$T/want.web")"
curl -sf "${WEB_URL}api/state" >"$T/state.json" || fail "GET /api/state"
"$PYTHON" "$MTRACE_SRC/tests/web/json_schema.py" "$MTRACE_SRC/docs/json.md" state "$T/state.json" ||
	fail "/api/state with bad_messages breaks docs/json.md"
kill -TERM "$WEBPID"
wait_pid "$WEBPID" 20 || fail "mtrace-web exited with an error"

# sums saturate: 2^63 twice
"$PYTHON" "$HERE/js_bad.py" "$NATS_PORT" wrap >/dev/null || fail "the Loss notices not stored"
"$CAT" --nats "$NATS_URL" --host h2 -f count --summary >/dev/null 2>"$T/wrap.err" ||
	fail "the replay of h2: $(tail -3 "$T/wrap.err")"
grep -q '"dropped_for_client":18446744073709551615,.*"saturated":\["dropped_for_client"\]' \
	"$T/wrap.err" || fail "two Loss notices of 2^63: $(grep '^{"events"' "$T/wrap.err" | cut -c1-200)"
pass "$(cat "$T/want") x3 malformed messages skipped and counted per host by a follower, a replay and mtrace-web; all $want events of h1 read; the h1 aliases under no host; 2^63 twice saturates"
