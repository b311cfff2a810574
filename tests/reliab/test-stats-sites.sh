#!/bin/bash
# Site statistics larger than a frame: 16 guests with 1,024 named sites each (names of
# 250 characters) make a Stats of --site-stats past the 4 MiB frame.  mtraced cuts the
# site tables like the others and says how much it left out (sites_omitted): every
# mtrace-cat --site-stats and mtrace-top -x asking gets its Stats.  Before: the cut
# never trimmed the site tables, the Stats was never sent (0 of 12 received).
. "$MTRACE_SRC/tests/rig.sh"
: "${CAT:?}" "${TOP:?}" "${MODULE_GUEST:?}"

sim_start
daemon_start --set max_sites_per_guest=1024
G=()
for i in $(seq 16); do
	G+=("$(guest "n$i" --preserve-poweroff -- "$MODULE_GUEST" -n 1024 -l 90)")
done
# each guest says when it wrote its sites
for _ in $(seq 300); do
	n=0
	for f in "$T"/n*.log; do grep -q '"sites":1024' "$f" 2>/dev/null && n=$((n + 1)); done
	[ "$n" = 16 ] && break
	sleep 0.1
done
[ "$n" = 16 ] || fail "only $n of 16 guests wrote their sites"
sleep 1 # the last records drained
got=0
for k in 1 2 3 4 5 6; do
	timeout 15 "$CAT" -s "$SOCK" --no-events --stats 200 --site-stats -n 1 -f json \
		>"$T/cat$k.json" 2>>"$T/cat.err" && [ -s "$T/cat$k.json" ] ||
		fail "mtrace-cat --site-stats: no Stats within 15 s ($got of $k received)"
	got=$((got + 1))
done
"$PYTHON" - "$T/cat1.json" <<'PY' || fail "the site tables were not cut and counted"
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print("# mtrace-cat: %d sites kept, %d omitted" % (len(s["sites"]), s["sites_omitted"]))
assert s["sites_omitted"] > 0 and len(s["sites"]) + s["sites_omitted"] == 16 * 1024
PY
tgot=0
for k in 1 2 3 4 5 6; do
	timeout 15 "$TOP" -b -n 1 -d 0.2 -x -S "$SOCK" >"$T/top$k.out" 2>>"$T/top.err" &&
		grep -q "sites omitted" "$T/top$k.out" ||
		fail "mtrace-top -x: no Stats with 'sites omitted' ($tgot of $k received)"
	tgot=$((tgot + 1))
done
note "Stats received: mtrace-cat --site-stats $got of 6, mtrace-top -x $tgot of 6"
grep -m1 "sites omitted" "$T/top1.out"
alive
daemon_stop
