#!/bin/bash
# The global site cache full of made-up build-ids (four guests publishing 64 each, or
# one guest rebooted four times doing so), then guests naming a real build-id (libc's,
# from this machine's debug files): mtraced survives and keeps naming sites.  Before:
# cache_add freed the module it had just opened once 256 entries were taken, and
# sites_module_find returned it (SIGSEGV on gcc, heap-use-after-free in sites_resolve
# under ASan); and a full cache never named another site until restart.
. "$MTRACE_SRC/tests/rig.sh"
: "${CAT:?}" "${MODULE_GUEST:?}"

LIBC=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null || true)
[ -f "$LIBC" ] || { echo "no libc.so.6 here: skipped"; exit 77; }
ID=$(readelf -n "$LIBC" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
[ -n "$ID" ] || { echo "libc has no build-id: skipped"; exit 77; }
if [ -f "/usr/lib/debug/.build-id/${ID:0:2}/${ID:2}.debug" ]; then
	DEBUG=/usr/lib/debug
else
	DEBUG=$T/debug # libc itself: its symbol table names functions
	mkdir -p "$DEBUG/.build-id/${ID:0:2}"
	ln -s "$LIBC" "$DEBUG/.build-id/${ID:0:2}/${ID:2}.debug"
fi
OFF=$(nm -D --defined-only "$LIBC" | sed -n 's/^0*\([0-9a-f]*\) [Tt] malloc\(@.*\)\{0,1\}$/\1/p' | head -n 1)
[ -n "$OFF" ] || fail "no malloc in $LIBC"
OFF=$(printf '%x' $((0x$OFF + 0x10)))
note "libc $ID, debug files under $DEBUG, a site at malloc+0x10 (0x$OFF)"

# sites_of DOMID: that domain's sites, one "resolved<TAB>name" a line
sites_of() {
	"$CAT" -s "$SOCK" -d "$1" --no-events --stats 100 --site-stats --top 1000 -n 1 -f json \
		2>>"$T/cat.err" | "$PYTHON" -c '
import json, sys
s = json.loads(sys.stdin.read().strip().splitlines()[-1])
for x in s["sites"]:
    print("%d\t%s" % (x["resolved"], x["site"]))'
}
# fakes_tried DOMID N: its N made-up modules were all looked up (shown as fakeI+0x100)
fakes_tried() {
	[ "$(sites_of "$1" | grep -c '^0	fake[0-9]*+0x100$')" -eq "$2" ]
}
real_named() {
	sites_of "$1" >"$T/real.sites"
	grep -q '^1	[^	]*malloc' "$T/real.sites"
}
real_guest() {	# NAME: a guest naming malloc in libc by its build-id, checked
	local r
	r=$(guest "$1" --preserve-poweroff -- "$MODULE_GUEST" -r "$ID" -o "$OFF" -l 30)
	for _ in $(seq 200); do
		alive
		real_named "$r" && break
		sleep 0.1
	done
	alive
	real_named "$r" || { cat "$T/real.sites" >&2; fail "$1: malloc not named"; }
	note "$1 (domain $r): $(cut -f2 "$T/real.sites")"
}

sim_start
printf 'debug_dirs = %s\nmax_sites_per_guest = 1024\n' "$DEBUG" >"$T/d.conf"

# four guests, 64 made-up build-ids each: the cache of 256 is full
daemon_start -c "$T/d.conf"
F=()
for i in 1 2 3 4; do
	F+=("$(guest "f$i" --preserve-poweroff -- "$MODULE_GUEST" -f 64 -s "$i" -l 60)")
done
for d in "${F[@]}"; do wait_until 30 fakes_tried "$d" 64; done
note "4 x 64 made-up build-ids looked up"
real_guest real1
# more made-up ones push libc's entry out; it is opened again when named again
F5=$(guest f5 --preserve-poweroff -- "$MODULE_GUEST" -f 64 -s 5 -l 60)
wait_until 30 fakes_tried "$F5" 64
real_guest real2
daemon_stop

# one tenant rebooting its guest four times, 64 made-up build-ids each boot
daemon_start -c "$T/d.conf"
for i in 1 2 3 4; do
	R=$(guest reboot --preserve-poweroff -- "$MODULE_GUEST" -f 64 -s $((10 + i)) -l 60)
	wait_until 30 fakes_tried "$R" 64
	"$SIMXEN" --dir "$SIM" destroy "$R" >/dev/null
	note "boot $i (domain $R): 64 made-up build-ids looked up"
done
real_guest real3
alive
daemon_stop
pass "mtraced survives a full site cache and keeps naming sites"
