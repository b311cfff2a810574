#!/bin/bash
# The 3 x 3 matrix (client/lib/source.h): mtrace-cat, mtrace-top -b and mtrace-web,
# each given the same live mtraced, the same recording and the same JetStream stream,
# print the same events and figures (tests/fleet/matrix.py says what each can show and
# compares it).  One simulated host runs the 2014 MirageOS trace replayed and an
# mtrace-load capture (two rings, failures, labels, counters), both held once written;
# live readers of every kind and mtrace-ship (into a real nats-server) watch it from
# the start, the live mtrace-cat also records it (-w).  Once every reader has the
# settled figures, the recording and the stream are read by the same three programs.
. "$(dirname "$0")/../rig.sh"
. "$HERE/lib.sh"
: "${TOP:?}" "${WEB:?}"
command -v curl >/dev/null || { echo "SKIP: curl is not installed" >&2; exit 77; }

M=$T/m
mkdir -p "$M"
MIRAGE=1 LOADD=5
LOAD_N=6000 # per ring
START=$SECONDS

nats_start
host_up h1
SOCK=${HSOCK[h1]}

# web_up NAME ARGS...: mtrace-web on a free loopback port, its URL in WEB_URL_<NAME>,
# and a capture of its /events from now on in $M/NAME.web.sse (pid CURL_<NAME>)
web_up() {
	local wn=$1 url
	shift
	"$WEB" -l 127.0.0.1:0 --no-token --history 256 --queue 256 "$@" \
		>"$T/$wn.web.out" 2>"$T/$wn.web.err" &
	PIDS+=("$!")
	eval "WEB_PID_$wn=\$!"
	wait_until 10 grep -q 'serving http' "$T/$wn.web.out" || fail "$wn: mtrace-web did not start"
	url=$(sed -n 's|^mtrace-web: serving \(http://[^ ]*/\).*|\1|p' "$T/$wn.web.out")
	eval "WEB_URL_$wn=\$url"
	curl -sN "${url}events" >"$M/$wn.web.sse" 2>/dev/null &
	PIDS+=("$!")
	eval "CURL_$wn=\$!"
	wait_until 10 grep -q 'event: hello' "$M/$wn.web.sse" || fail "$wn: no hello on /events"
}

# web_done NAME: /api/state saved, the capture has every event, both stopped
web_done() {
	local wn=$1 url pid
	eval "url=\$WEB_URL_$wn"
	wait_until 60 "$PYTHON" "$HERE/matrix.py" settled-web "$url" $EXPECT ||
		fail "$wn: mtrace-web's /api/state never showed the settled figures"
	curl -sf "${url}api/state" >"$M/$wn.web.json" || fail "$wn: /api/state"
	wait_until 60 eval '[ "$("$PYTHON" "$HERE/matrix.py" sse-events "$M/$wn.web.sse")" = "$TOTAL" ]' ||
		fail "$wn: /events carried $("$PYTHON" "$HERE/matrix.py" sse-events "$M/$wn.web.sse") of $TOTAL events"
	eval "pid=\$CURL_$wn"
	kill -TERM "$pid"
	wait "$pid" 2>/dev/null
	eval "pid=\$WEB_PID_$wn"
	kill -TERM "$pid"
	wait_pid "$pid" 10 || fail "$wn: mtrace-web exited $?"
}

# --- live: every reader from the start, mtrace-ship into the stream ----------------
"$CAT" -s "$SOCK" -f json --stats 200 --label-stats --threads 1000 -w "$M/rec.mtr" \
	>"$M/live.cat.json" 2>"$T/live.cat.err" &
CAT_LIVE=$!
PIDS+=("$CAT_LIVE")
"$TOP" -b -d 0.2 -N 1000 -s "$SOCK" >"$M/live.top.txt" 2>"$T/live.top.err" &
TOP_LIVE=$!
"$TOP" -b -d 0.2 -g -s "$SOCK" >"$M/live.topg.txt" 2>"$T/live.topg.err" &
TOPG_LIVE=$!
PIDS+=("$TOP_LIVE" "$TOPG_LIVE")
web_up live -s "$SOCK" --stats 200
ship h1 --stats 200
host_clients h1 5
note "live readers and mtrace-ship up"

FIXTURE_EVENTS=$(( $("$REPLAY" --dump "$FIXTURE" 2>/dev/null | wc -l) + 1 )) # + ring_start
host_guest h1 mirage --domid $MIRAGE -- "$REPLAY" --hold --quiet --speed 0 "$FIXTURE" >/dev/null
host_guest h1 load --domid $LOADD -- "$LOAD" --wait-reader 10 --hold --rings 2 -n $LOAD_N \
	-p 256 --rate 30000 --fail 20 --labels 8 -c 3 >/dev/null
EXPECT="$MIRAGE=$FIXTURE_EVENTS $LOADD=$((2 * LOAD_N))"
TOTAL=$((FIXTURE_EVENTS + 2 * LOAD_N))
host_domain_events h1 $MIRAGE "$FIXTURE_EVENTS"
host_domain_events h1 $LOADD $((2 * LOAD_N))
note "mtraced has read the $TOTAL events"

# every live reader has a Stats of the settled state (the guests hold: later ones say
# the same), and the stream has mtrace-ship's
wait_until 30 "$PYTHON" "$HERE/matrix.py" settled-cat "$M/live.cat.json" $EXPECT ||
	fail "the live mtrace-cat never had the settled figures"
wait_until 30 "$PYTHON" "$HERE/matrix.py" settled-top "$M/live.top.txt" $EXPECT ||
	fail "the live mtrace-top never showed the settled figures"
wait_until 30 "$PYTHON" "$HERE/matrix.py" settled-top "$M/live.topg.txt" $EXPECT ||
	fail "the live mtrace-top -g never showed the settled figures"
web_done live
wait_until 30 eval '"$CAT" --nats "$NATS_URL" --host h1 -f json >"$T/stream.json" 2>>"$T/stream.err" &&
	"$PYTHON" "$HERE/matrix.py" settled-cat "$T/stream.json" $EXPECT' ||
	fail "the stream never had mtrace-ship's Stats of the settled state"
kill -INT "$CAT_LIVE"
wait_pid "$CAT_LIVE" 10 || fail "the live mtrace-cat exited $?: $(cat "$T/live.cat.err")"
kill -TERM "$TOP_LIVE" "$TOPG_LIVE"
wait "$TOP_LIVE" "$TOPG_LIVE"
ship_stop h1
[ "$(figure h1 dropped)" = 0 ] || fail "mtrace-ship dropped messages"
note "live: mtrace-cat, mtrace-top, mtrace-web done; the recording and the stream made"

# --- the recording, then the stream: the same three programs -----------------------
"$CAT" -i "$M/rec.mtr" -f json >"$M/rec.cat.json" || fail "mtrace-cat -i"
"$TOP" -b -N 1000 -i "$M/rec.mtr" >"$M/rec.top.txt" || fail "mtrace-top -b -i"
"$TOP" -b -g -i "$M/rec.mtr" >"$M/rec.topg.txt" || fail "mtrace-top -b -g -i"
web_up rec -i "$M/rec.mtr"
web_done rec
note "the recording read by mtrace-cat, mtrace-top and mtrace-web"

N=(--nats "$NATS_URL" --host h1)
"$CAT" "${N[@]}" -f json >"$M/nats.cat.json" 2>"$T/nats.cat.err" || fail "mtrace-cat --nats"
"$TOP" -b -N 1000 "${N[@]}" >"$M/nats.top.txt" 2>"$T/nats.top.err" || fail "mtrace-top -b --nats"
"$TOP" -b -g "${N[@]}" >"$M/nats.topg.txt" 2>"$T/nats.topg.err" || fail "mtrace-top -b -g --nats"
web_up nats "${N[@]}" --from-start
web_done nats
note "the stream read by mtrace-cat, mtrace-top and mtrace-web"

"$PYTHON" "$HERE/matrix.py" check "$M" $EXPECT >"$T/matrix.out" 2>&1 ||
	{ cat "$T/matrix.out"; fail "the 3 x 3 matrix differs"; }
cat "$T/matrix.out"
pass "mtrace-cat, mtrace-top and mtrace-web agree on the live daemon, the recording and the stream ($((SECONDS - START)) s)"
