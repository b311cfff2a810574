#!/bin/bash
# The units as installed pass "systemd-analyze verify" without a single complaint
# (which also checks that the man pages named in Documentation= are installed), the
# sysusers.d/tmpfiles.d snippets do what they say, and the exposure scores of
# mtraced.service and mtrace-ship.service stay at or below 2.0.
. "$MTRACE_SRC/tests/rig.sh"

command -v systemd-analyze >/dev/null || { echo "SKIP: no systemd-analyze"; exit 77; }
install_destdir
unitdir=$D$MTRACE_UNITDIR
for u in mtraced.service mtraced.socket; do
	[ -f "$unitdir/$u" ] || fail "$u not installed in $MTRACE_UNITDIR"
done
grep -q '@[a-z_]*@' "$unitdir/mtraced.service" && fail "unsubstituted @var@ in mtraced.service"

# verify checks that ExecStart names an executable.  Point a copy of the unit at the
# DESTDIR binary; the copy must differ from the installed unit in that path only.
mkdir -p "$T/units"
sed "s|^ExecStart=$MTRACE_SBINDIR/|ExecStart=$D$MTRACE_SBINDIR/|" \
	"$unitdir/mtraced.service" >"$T/units/mtraced.service"
cp "$unitdir/mtraced.socket" "$T/units/"
changed=$(diff "$unitdir/mtraced.service" "$T/units/mtraced.service" | grep -c '^>')
[ "$changed" = 1 ] || fail "test copy of the unit differs in $changed lines, expected 1"
[ -x "$D$MTRACE_SBINDIR/mtraced" ] || fail "mtraced not installed in $MTRACE_SBINDIR"

# Units it names come from the host (sysinit, sockets.target, ...); the Xen ones it
# only Wants= need not exist.  MANPATH: the installed man pages.
export SYSTEMD_UNIT_PATH=$T/units:
export MANPATH=$D$MTRACE_MANDIR
systemd-analyze verify "$T/units/mtraced.service" "$T/units/mtraced.socket" >"$T/verify.out" 2>&1
rc=$?
cat "$T/verify.out"
[ $rc = 0 ] || fail "systemd-analyze verify exited $rc"
[ -s "$T/verify.out" ] && fail "systemd-analyze verify complained"

# mtrace-ship.service likewise (installed, its binary and man page from the DESTDIR),
# hardened like the other clients: no capability, a dynamic user in group mtrace, only
# AF_UNIX and IP, its spool in its StateDirectory; scored below.
u=mtrace-ship.service
[ -f "$unitdir/$u" ] || fail "$u not installed in $MTRACE_UNITDIR"
grep -q '@[a-z_]*@' "$unitdir/$u" && fail "unsubstituted @var@ in $u"
sed "s|^ExecStart=$MTRACE_BINDIR/|ExecStart=$D$MTRACE_BINDIR/|" "$unitdir/$u" >"$T/units/$u"
changed=$(diff "$unitdir/$u" "$T/units/$u" | grep -c '^>')
[ "$changed" = 1 ] || fail "test copy of $u differs in $changed lines, expected 1"
[ -x "$D$MTRACE_BINDIR/mtrace-ship" ] || fail "mtrace-ship not installed in $MTRACE_BINDIR"
for want in '^CapabilityBoundingSet=$' '^AmbientCapabilities=$' '^DynamicUser=yes$' \
	'^SupplementaryGroups=mtrace$' '^RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6$' \
	'^NoNewPrivileges=yes$' '^StateDirectory=mtrace-ship$' '^ProtectSystem=strict$' \
	'^ExecStart=.* --spool \${STATE_DIRECTORY} '; do
	grep -q "$want" "$T/units/$u" || fail "$u lacks $want"
done
systemd-analyze verify "$T/units/$u" >"$T/verify-ship.out" 2>&1
rc=$?
cat "$T/verify-ship.out"
[ $rc = 0 ] || fail "systemd-analyze verify $u exited $rc"
[ -s "$T/verify-ship.out" ] && fail "systemd-analyze verify complained about $u"

# The sysusers.d and tmpfiles.d snippets, applied by their tools to an empty root:
# the group exists afterwards, and so does /run/mtrace, mode 0755.
mkdir -p "$T/root/etc"
systemd-sysusers --root="$T/root" "$D$MTRACE_SYSUSERSDIR/mtrace.conf" >"$T/sysusers.out" 2>&1 ||
	{ cat "$T/sysusers.out"; fail "systemd-sysusers rejected mtrace.conf"; }
grep -q '^mtrace:x:[0-9]*:' "$T/root/etc/group" || fail "sysusers.d snippet made no group mtrace"
systemd-tmpfiles --root="$T/root" --create "$D$MTRACE_TMPFILESDIR/mtrace.conf" \
	>"$T/tmpfiles.out" 2>&1 || { cat "$T/tmpfiles.out"; fail "systemd-tmpfiles rejected mtrace.conf"; }
[ "$(stat -c %a "$T/root/run/mtrace")" = 755 ] || fail "tmpfiles.d snippet: no /run/mtrace 0755"

# The lockdown: score the installed unit (systemd 252 needs --offline for a file).
systemd-analyze security --offline=true --no-pager "$T/units/mtraced.service" \
	>"$T/security.out" 2>&1
score=$(sed -n 's/.*Overall exposure level for mtraced.service: \([0-9.]*\).*/\1/p' "$T/security.out")
[ -n "$score" ] || { cat "$T/security.out"; fail "no exposure score"; }
echo "systemd-analyze security exposure: $score"
awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }' || { grep '✗' "$T/security.out"; fail "exposure $score > 2.0"; }
systemd-analyze security --offline=true --no-pager "$T/units/mtrace-ship.service" \
	>"$T/security-ship.out" 2>&1
score=$(sed -n 's/.*Overall exposure level for mtrace-ship.service: \([0-9.]*\).*/\1/p' "$T/security-ship.out")
[ -n "$score" ] || { cat "$T/security-ship.out"; fail "no exposure score for mtrace-ship.service"; }
echo "systemd-analyze security exposure of mtrace-ship.service: $score"
awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }' ||
	{ grep '✗' "$T/security-ship.out"; fail "mtrace-ship.service exposure $score > 2.0"; }
echo "ok"
