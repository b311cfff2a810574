#!/bin/bash
# A guest sending garbage sites (sites-hostile) next to a well-behaved one
# (sites-guest): the daemon's site tables stay at their caps with the rest counted,
# its memory stays bounded, it keeps answering, the good guest's sites still resolve
# exactly, the JSON stays valid, and the only files it opens under the debug
# directory are the ones the administrator put there (strace, then /proc/PID/fd).
. "$(dirname "$0")/../rig.sh"
: "${CAT:?}" "${SITES_GUEST:?}" "${SITES_HOSTILE:?}"

. "$HERE/lib.sh"
sites_debug_dir "$T/debug"

rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$DPID/status"; }

sim_start
printf 'debug_dirs = %s/debug\nmax_sites_per_guest = 1024\n' "$T" >"$T/d.conf"
daemon_start -c "$T/d.conf"
STRACE=
# LeakSanitizer refuses to run in a process that was ever traced: no strace there
if nm "$MTRACED" 2>/dev/null | grep -q __asan_init; then
	note "sanitizer build: /proc/PID/fd only"
elif command -v strace >/dev/null && strace -f -qq -e trace=open,openat,openat2 -o "$T/strace" \
	-p "$DPID" 2>"$T/strace.err" & then
	STRACE=$!
	PIDS+=("$STRACE")
	sleep 0.5
fi
RSS0=$(rss)
H=$(guest h --preserve-poweroff -- "$SITES_HOSTILE" --linger 30)
G=$(guest g --preserve-poweroff -- "$SITES_GUEST" --linger 30)
for _ in $(seq 300); do
	tail -c 3 "$T/h.log" 2>/dev/null | grep -q '}' && break
	sleep 0.1
done
note "hostile guest: $(cat "$T/h.log")"

# the good guest: exact as ever
wait_until 10 sites_ready g "$G"
"$PYTHON" "$HERE/check_sites.py" "$T/g.log" "$T/g.stats" "$SITES_GUEST" "$G" ||
	fail "the good guest's sites differ"

# the hostile one: capped and counted; the JSON of its strings parses
sleep 1.5
"$CAT" -s "$SOCK" -D "$H" --no-events --stats 100 --site-stats -n 1 -f json \
	>"$T/h.stats" 2>>"$T/cat.err" || fail "mtrace-cat (hostile)"
"$PYTHON" - "$T/h.stats" "$H" <<'PY' || fail "hostile guest not capped and counted"
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
dom = int(sys.argv[2])
sites = [x for x in s["sites"] if x["domid"] == dom]
d = [x for x in s["domains"] if x["domid"] == dom][0]
print("# hostile: %d sites kept, %d resolved; domain %s" % (len(sites),
      sum(x["resolved"] for x in sites), {k: d.get(k) for k in ("events", "lost")}))
drops = [x for x in s["site_drops"] if x["domid"] == dom][0]
print("# hostile: counted %s" % drops)
assert len(sites) == 1024, len(sites)
assert drops["sites_dropped"] > 0 and drops["modules_dropped"] > 0 and drops["sites_bad"] > 0
assert drops["site_edges_dropped"] == 0  # edges are capped at 4 per site: 1 each here
for x in sites:
    assert len(x["site"]) < 300, x["site"][:80]
PY
snap
RSS1=$(rss)
note "mtraced VmRSS: $RSS0 kB before, $RSS1 kB after"
[ $((RSS1 - RSS0)) -lt 65536 ] || fail "mtraced grew by $((RSS1 - RSS0)) kB"

# Files: only the administrator's.  Under the debug directory: only the real debug file.
for fd in /proc/"$DPID"/fd/*; do
	l=$(readlink "$fd") || continue
	case $l in
	"$T"/*|"$(readlink -f "$SITES_GUEST")"|socket:*|pipe:*|anon_inode:*|/dev/*) ;;
	*) fail "mtraced holds $l open" ;;
	esac
done
if [ -n "$STRACE" ]; then
	kill "$STRACE"; wait "$STRACE" 2>/dev/null
	grep -o '"[^"]*"' "$T/strace" | tr -d '"' | sort -u >"$T/opened"
	note "mtraced opened $(wc -l <"$T/opened") distinct paths while the guests ran"
	if grep -v -e "^$SIM/" -e "^$T/debug/.build-id/[0-9a-f][0-9a-f]/[0-9a-f]*\.debug\$" \
		"$T/opened" >"$T/foreign"; then
		cat "$T/foreign"
		fail "mtraced opened a path the administrator did not configure"
	fi
	grep -q "passwd\|shadow" "$T/opened" && fail "a guest-named path was opened"
else
	note "strace not usable here: /proc/PID/fd checked only"
fi
daemon_stop
