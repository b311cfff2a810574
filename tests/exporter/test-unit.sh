#!/bin/bash
# systemd/mtrace-exporter.service passes "systemd-analyze verify" without a complaint,
# grants no capability, only AF_UNIX and AF_INET/AF_INET6, runs in group mtrace with no
# fixed user, and scores an exposure of at most 2.0.
set -u
T=$(mktemp -d "${TMPDIR:-/tmp}/mtrace-exporter-unit.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v systemd-analyze >/dev/null || { echo "SKIP: no systemd-analyze" >&2; exit 77; }
unit=$MTRACE_BUILD_ROOT/systemd/mtrace-exporter.service
[ -f "$unit" ] || fail "$unit not built"
grep -q '@[a-z_]*@' "$unit" && fail "unsubstituted @var@"
mkdir -p "$T/units" "$T/man/man1"
sed "s|^ExecStart=.*/mtrace-exporter|ExecStart=$MTRACE_BUILD_ROOT/client/exporter/mtrace-exporter|" \
	"$unit" >"$T/units/mtrace-exporter.service"
cp "$MTRACE_SRC/docs/man/mtrace-exporter.1" "$T/man/man1/"
for want in '^CapabilityBoundingSet=$' '^AmbientCapabilities=$' '^DynamicUser=yes$' \
	'^SupplementaryGroups=mtrace$' '^RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6$' \
	'^NoNewPrivileges=yes$'; do
	grep -q "$want" "$T/units/mtrace-exporter.service" || fail "unit lacks $want"
done
SYSTEMD_UNIT_PATH=$T/units: MANPATH=$T/man \
	systemd-analyze verify "$T/units/mtrace-exporter.service" >"$T/verify.out" 2>&1
rc=$?
cat "$T/verify.out"
[ $rc = 0 ] || fail "systemd-analyze verify exited $rc"
[ -s "$T/verify.out" ] && fail "systemd-analyze verify complained"
systemd-analyze security --offline=true --no-pager "$T/units/mtrace-exporter.service" \
	>"$T/security.out" 2>&1
score=$(sed -n 's/.*Overall exposure level for mtrace-exporter.service: \([0-9.]*\).*/\1/p' "$T/security.out")
[ -n "$score" ] || { cat "$T/security.out"; fail "no exposure score"; }
echo "systemd-analyze security exposure: $score"
awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }' || { grep '✗' "$T/security.out"; fail "exposure $score > 2.0"; }
echo PASS
