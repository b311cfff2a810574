#!/bin/bash
# test-unit.sh - mtrace-web.service as built passes systemd-analyze verify without a
# complaint (its man pages found), keeps the lockdown the issue asks for, and its
# exposure score stays at or below 2.0.
set -u
: "${MTRACE_SRC:?}" "${MTRACE_BUILD_ROOT:?}"
T=$(mktemp -d "${TMPDIR:-/tmp}/mtrace-web-unit.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v systemd-analyze >/dev/null || { echo "SKIP: no systemd-analyze"; exit 77; }
unit=$MTRACE_BUILD_ROOT/systemd/mtrace-web.service
[ -f "$unit" ] || fail "$unit not built"
grep -q '@[a-z_]*@' "$unit" && fail "unsubstituted @var@ in mtrace-web.service"
mkdir -p "$T/units" "$T/man/man1" "$T/man/man8"
sed "s|^ExecStart=.*|ExecStart=$MTRACE_BUILD_ROOT/client/web/mtrace-web|" "$unit" >"$T/units/mtrace-web.service"
ln -s "$MTRACE_SRC/docs/man/mtrace-web.1" "$T/man/man1/"
ln -s "$MTRACE_SRC/docs/man/mtraced.8" "$T/man/man8/"
for want in 'DynamicUser=yes' 'SupplementaryGroups=mtrace' 'CapabilityBoundingSet=$' \
	'NoNewPrivileges=yes' 'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6$' \
	'ProtectSystem=strict' 'MemoryDenyWriteExecute=yes'; do
	grep -q "^$want" "$unit" || fail "mtrace-web.service lacks $want"
done
export SYSTEMD_UNIT_PATH=$T/units: MANPATH=$T/man
systemd-analyze verify "$T/units/mtrace-web.service" >"$T/verify.out" 2>&1
rc=$?
cat "$T/verify.out"
[ $rc = 0 ] && [ ! -s "$T/verify.out" ] || fail "systemd-analyze verify: status $rc"
systemd-analyze security --offline=true --no-pager "$T/units/mtrace-web.service" >"$T/sec.out" 2>&1
score=$(sed -n 's/.*Overall exposure level for mtrace-web.service: \([0-9.]*\).*/\1/p' "$T/sec.out")
[ -n "$score" ] || { cat "$T/sec.out"; fail "no exposure score"; }
awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }' || fail "exposure $score > 2.0"
echo "ok: verify clean, exposure $score"
