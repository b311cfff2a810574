#!/bin/bash
# Creation sites end to end: sites-guest (-g, PIE) on the simulated Xen, the real
# mtraced finding its debug info by build-id (then, in a second daemon, through the
# image configured for its domain name), and every thread's site checked against the
# guest's own account and against addr2line -f -i on the same file addresses; the
# creation graph between sites must be the guest's exactly.
. "$(dirname "$0")/../rig.sh"
: "${CAT:?}" "${SITES_GUEST:?}"

. "$HERE/lib.sh"
sites_debug_dir "$T/debug"
mkdir -p "$T/empty"

# check NAME DOMID: wait until the daemon has every site of guest NAME resolved, then
# compare with its account and addr2line
check() {
	local name=$1 dom=$2 ok=
	for _ in $(seq 50); do
		"$CAT" -s "$SOCK" -D "$dom" --no-events --stats 100 --site-stats --top 1000 \
			--finished -n 1 -f json >"$T/$name.stats" 2>>"$T/cat.err" || fail "mtrace-cat"
		if "$PYTHON" "$HERE/check_sites.py" "$T/$name.log" "$T/$name.stats" \
			"$SITES_GUEST" "$dom" --quiet --ready; then
			ok=1
			break
		fi
		sleep 0.2
	done
	[ -n "$ok" ] || fail "guest $name: the daemon never had all its sites"
	"$PYTHON" "$HERE/check_sites.py" "$T/$name.log" "$T/$name.stats" \
		"$SITES_GUEST" "$dom" || fail "guest $name: sites differ"
	note "guest $name: every site as addr2line says, graph exact"
}

sim_start
printf 'debug_dirs = %s/empty:%s/debug\n' "$T" "$T" >"$T/a.conf"
daemon_start -c "$T/a.conf"
# the creation tree as folded stacks of sites, from the stream, at exit
"$CAT" -s "$SOCK" -f folded --frames site --time 30 >"$T/a.folded" 2>"$T/folded.err" &
FOLDED=$!
PIDS+=("$FOLDED")
sleep 0.3
A=$(guest a --preserve-poweroff -- "$SITES_GUEST" --linger 20)
check a "$A"
sleep 0.5 # a Stats with every site resolved has reached the folded client
kill -INT "$FOLDED"
wait "$FOLDED" || fail "mtrace-cat -f folded failed: $(cat "$T/folded.err")"
"$PYTHON" "$HERE/check_folded.py" "$T/a.log" "$T/a.folded" || fail "folded stacks"
# mtrace-top: the sites view, and a site as the automatic label of unlabelled threads
if [ -n "${TOP:-}" ]; then
	"$TOP" -b -n 1 -x -S "$SOCK" >"$T/top.sites" 2>&1 || fail "mtrace-top -x"
	grep -Eq '^a +10 +[0-9]+ .* leaf_spawner \(sites-guest\.c:64\)$' "$T/top.sites" ||
		{ cat "$T/top.sites"; fail "mtrace-top -x: no leaf_spawner row of 10"; }
	grep -Eq 'helper_spawn \(sites-guest\.c:53\) < pool_start$' "$T/top.sites" ||
		{ cat "$T/top.sites"; fail "mtrace-top -x: inlined frames"; }
	"$TOP" -b -n 1 --finished -S "$SOCK" >"$T/top.threads" 2>&1 || fail "mtrace-top"
	grep -q ' @pool_start (sites-guest\.c:72)$' "$T/top.threads" &&
		grep -q ' conn$' "$T/top.threads" ||
		{ cat "$T/top.threads"; fail "mtrace-top: automatic labels"; }
	note "mtrace-top: sites view and automatic labels"
fi
daemon_stop

# No debug directory has it: the image configured for domain name "b".
printf 'debug_dirs = %s/empty\nimage = b %s\n' "$T" "$SITES_GUEST" >"$T/b.conf"
daemon_start -c "$T/b.conf"
B=$(guest b --preserve-poweroff -- "$SITES_GUEST" --linger 20)
check b "$B"
# Only what the administrator configured was opened: the image, never another file.
grep -q "reading debug info of $SITES_GUEST" "$DLOG" || fail "image not read"
daemon_stop
