#!/bin/bash
# Hostile names: domains named `a.b`, `*` and `>`, and host names with a space and with
# invalid UTF-8, land on subjects of their own (escaped tokens, docs/fleet.md), never on
# a wildcard or on a token more; each domain's events are read back under its name.
. "$(dirname "$0")/../rig.sh"
. "$HERE/lib.sh"

nats_start
host_up h1
ship h1 --spool "$T/h1/spool"
host_clients h1 1
# a second shipper on the same mtraced under a host name that is itself hostile
"$SHIP" -s "${HSOCK[h1]}" --nats "$NATS_URL" --host $'bad host\xff\xfe.*>' \
	>>"$T/bad.ship.log" 2>&1 &
BAD=$!
PIDS+=("$BAD")
host_clients h1 2
i=10
for name in a.b '*' '>'; do
	i=$((i + 1))
	host_guest h1 "$name" --domid $i -- "$LOAD" --wait-reader 10 --linger 10 \
		--summary "$T/h1/load-$i.json" -n 1000 --seed $i >/dev/null
done
host_idle h1
# the shippers are stopped once the stream has the three guests' DomainDown, their last
# messages (SIGTERM does not wait for what mtraced sent)
for h in h1 $'bad host\xff\xfe.*>'; do
	wait_growing "the stream's DomainDown of the guests of '$h'" 20 180 "$T/downs.json" \
		eval '"$CAT" --nats "$NATS_URL" --host "$h" -f json >"$T/downs.json" 2>"$T/downs.err" &&
			[ "$(grep -c "\"type\":\"domain_down\"" "$T/downs.json")" = 3 ]'
done
ship_stop h1
kill -TERM "$BAD"
wait_pid "$BAD" 20 || fail "the second mtrace-ship failed"
"$PYTHON" "$HERE/js_subjects.py" "$NATS_PORT" >"$T/subjects" || fail "stream info"
cat "$T/subjects" | sed 's/^/# /'
want=$(printf '%s\n' mtrace.h1._.events mtrace.h1.a%2Eb.events mtrace.h1.%2A.events \
	mtrace.h1.%3E.events mtrace.bad%20host%FF%FE%2E%2A%3E._.events \
	mtrace.bad%20host%FF%FE%2E%2A%3E.a%2Eb.events mtrace.bad%20host%FF%FE%2E%2A%3E.%2A.events \
	mtrace.bad%20host%FF%FE%2E%2A%3E.%3E.events | sort)
got=$(cut -d' ' -f1 "$T/subjects" | grep -v '\.stats$' | sort)
[ "$got" = "$want" ] || fail "subjects: $(echo $got), expected $(echo $want)"
for name in a.b '*' '>'; do
	n=$("$CAT" --nats "$NATS_URL" --host h1 -D "$name" -f count --summary 2>&1 >/dev/null |
		grep -o '"events":[0-9]*' | cut -d: -f2)
	[ "$n" = 1000 ] || fail "domain '$name': $n events read back, 1000 written"
done
n=$("$CAT" --nats "$NATS_URL" --host $'bad host\xff\xfe.*>' -f count --summary 2>&1 >/dev/null |
	grep -o '"events":[0-9]*' | cut -d: -f2)
[ "$n" = 3000 ] || fail "the hostile host: $n events read back, 3000 written"
pass "hostile names: each on a subject of its own, every event read back under its name"
