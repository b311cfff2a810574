# lib.sh - what the tests of sites-guest share, sourced after tests/rig.sh.
#
#   sites_debug_dir DIR          DIR/.build-id/xx/yyyy.debug: sites-guest's debug info
#                                where a debug directory keeps it (by its build-id)
#   sites_stats NAME DOMID       mtrace-cat's Stats of DOMID (every site, thread and
#                                edge) into $T/NAME.stats
#   sites_ready NAME DOMID       true when those Stats hold every thread the guest
#                                NAME made and every address site was looked up
: "${CAT:?}" "${SITES_GUEST:?}"
SITES_DIR=$MTRACE_SRC/tests/sites

sites_debug_dir() {
	local id
	id=$(readelf -n "$SITES_GUEST" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
	[ -n "$id" ] || fail "sites-guest has no build-id"
	mkdir -p "$1/.build-id/${id:0:2}"
	ln -sf "$SITES_GUEST" "$1/.build-id/${id:0:2}/${id:2}.debug"
}

sites_stats() {
	"$CAT" -s "$SOCK" -D "$2" --no-events --stats 100 --site-stats --top 1000 --finished \
		-n 1 -f json >"$T/$1.stats" 2>>"$T/cat.err"
}

sites_ready() {
	sites_stats "$1" "$2" && "$PYTHON" "$SITES_DIR/check_sites.py" "$T/$1.log" "$T/$1.stats" \
		"$SITES_GUEST" "$2" --quiet --ready
}
