#!/bin/bash
# The time for symbolisation is shared between the domains that have sites waiting,
# not between all domains: one guest's 1,024 sites in libc (a real build-id) are all
# looked up about as fast beside 31 guests that have no sites as they are alone.
# Before: each tick's 2 ms was split evenly between every domain (at least 100 us
# each), so beside 31 idle guests the one that had sites got 100 us a tick, and a
# lookup that overran it was repaid by skipping its next shares: 32.2 s beside them
# against 2.8 s alone (after: 1.9 s beside them, 3.0 s alone, on a busy machine).
. "$MTRACE_SRC/tests/rig.sh"
: "${LOAD:?}" "${MODULE_GUEST:?}"

LIBC=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null || true)
[ -f "$LIBC" ] || { echo "no libc.so.6 here: skipped"; exit 77; }
ID=$(readelf -n "$LIBC" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
[ -f "/usr/lib/debug/.build-id/${ID:0:2}/${ID:2}.debug" ] ||
	{ echo "no debug info for libc (libc6-dbg): skipped"; exit 77; }
# 64 functions of libc, each site a few bytes into one: lookups that find a line
OFFS=()
while read -r off; do
	OFFS+=(-o "$(printf '%x' $((0x$off + 4)))")
done < <(nm -D --defined-only "$LIBC" | awk '$2 == "T" { print $1 }' | sort -u | head -n 64)

# untried MODULE_GUEST_DOMID: how many of its sites were not looked up yet (a site
# not looked up is shown by its address, 0x7f...; one looked up by symbol or as
# real.so+OFFSET)
untried() {
	"$CAT" -s "$SOCK" -D "$1" --no-events --stats 100 --site-stats --top 1 -n 1 -f json \
		2>>"$T/cat.err" | "$PYTHON" -c '
import json, sys
s = json.loads(sys.stdin.read().strip().splitlines()[-1])
sites = s.get("sites", [])
print(sum(1 for x in sites if x["site"].startswith("0x")) if sites else -1)'
}
# time_sites NAME: ms until every site of a fresh module guest was looked up
time_sites() {
	local d t0 n
	t0=$(date +%s%N)
	d=$(guest "$1" -- "$MODULE_GUEST" -r "$ID" "${OFFS[@]}" -u 960 -l 120)
	wait_until 30 grep -q '"sites"' "$T/$1.log" || fail "$1 wrote nothing"
	for _ in $(seq 300); do
		alive
		n=$(untried "$d")
		[ "$n" = 0 ] && break
		sleep 0.1
	done
	[ "$n" = 0 ] || fail "$1: $n sites never looked up"
	echo $((($(date +%s%N) - t0) / 1000000))
}

sim_start
printf 'debug_dirs = /usr/lib/debug\nmax_sites_per_guest = 2048\n' >"$T/d.conf"
daemon_start -c "$T/d.conf"
alone=$(time_sites alone)
note "1,024 sites looked up in $alone ms with no other guest"
for i in $(seq 31); do
	guest "idle$i" -- "$LOAD" -n 10 --wait-reader 10 --linger 120 >/dev/null
done
crowd=$(time_sites crowd)
note "1,024 sites looked up in $crowd ms beside 31 guests with none"
# generous for a loaded machine, far below the 100 us-a-tick share
[ "$crowd" -le $((alone * 3 + 3000)) ] ||
	fail "beside 31 idle guests the lookups took $crowd ms (alone: $alone ms)"
alive
daemon_stop
