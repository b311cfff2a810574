# lib.sh - shared by the service tests: a fresh temporary directory removed on exit,
# every process started recorded and killed, a DESTDIR install of the build.
#
# Environment (set by tests/service/meson.build): MESON, MTRACE_BUILD_ROOT, and the
# install directories MTRACE_PREFIX, MTRACE_BINDIR, ... as meson computed them.

set -u
T=$(mktemp -d "${TMPDIR:-/tmp}/mtrace-service.XXXXXX") || exit 1
PIDS=()

cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	sleep 0.2
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# Install the build tree into $T/dest (what "meson install" would put on a system).
# Its output is kept in $T and shown only on failure.
D=$T/dest
install_destdir() {
	"$MESON" install -C "$MTRACE_BUILD_ROOT" --no-rebuild --quiet --destdir "$D" \
		>"$T/install.log" 2>&1 || { cat "$T/install.log" >&2; fail "meson install"; }
}
