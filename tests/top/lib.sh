# lib.sh - shared by the top tests: a fresh directory, the rig of scripts/demo-rig.sh,
# and everything started killed on exit.
# Environment (tests/top/meson.build): MTRACE_SRC, MTRACE_BUILD_ROOT.
set -u
T=$(mktemp -d "${TMPDIR:-/tmp}/mtrace-top-test.XXXXXX") || exit 1
RIG_DIR=$T
RIG_BUILD=$MTRACE_BUILD_ROOT
. "$MTRACE_SRC/scripts/demo-rig.sh"
FIXTURE=$MTRACE_SRC/data/mirage/log-x86.sexp
TESTS=$MTRACE_SRC/tests/top

lib_cleanup() {
	local rc=$? f
	trap - EXIT
	type test_cleanup >/dev/null 2>&1 && test_cleanup
	rig_stop
	# Guests run under the broker, so their exit status is nobody's: in a sanitizer
	# build, read what they said instead.
	for f in "$T"/guest-*.log; do
		if [ -f "$f" ] && grep -qE "Sanitizer|runtime error" "$f"; then
			echo "FAIL: sanitizer report in $f:" >&2
			head -n 40 "$f" >&2
			rc=1
		fi
	done
	rm -rf "$T"
	exit $rc
}
trap lib_cleanup EXIT
trap 'exit 143' TERM INT

# Programs another area builds behind a guard may be missing: that is a skip, said why.
need() {
	local p
	for p in "$@"; do
		[ -x "$p" ] || { echo "SKIP: $p is not built" >&2; exit 77; }
	done
}

fail() {
	echo "FAIL: $*" >&2
	for f in "$T"/*.log; do
		[ -f "$f" ] || continue
		echo "--- $f" >&2
		tail -n 15 "$f" >&2
	done
	exit 1
}
