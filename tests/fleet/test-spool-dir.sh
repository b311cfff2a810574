#!/bin/bash
# The spool's directory is not trusted (issue 36, #9): one that exists with another
# owner, or writable by group or world (sticky or not), is refused, and so is a spool
# file that is a symlink (its target is left as it was); a directory that does not exist
# is made with mode 0700; one reached through a root-owned symlink to a private one
# (systemd's StateDirectory with DynamicUser) is taken.
. "$(dirname "$0")/../rig.sh"
. "$HERE/lib.sh"

nats_start
host_up h1

# refused WHAT DIR: mtrace-ship must exit 1 saying why, within 5 s
refused() {
	local what=$1 dir=$2 rc=0
	timeout 5 "$SHIP" -s "${HSOCK[h1]}" --nats "$NATS_URL" --host h1 --spool "$dir" \
		>"$T/refused.out" 2>&1 || rc=$?
	cmp -s "$T/victim" "$T/victim.orig" ||
		fail "--spool $what: the symlink's target was changed ($(stat -c %s "$T/victim") bytes left of $(stat -c %s "$T/victim.orig"))"
	[ "$rc" = 1 ] || fail "--spool $what: exit status $rc ($(tail -2 "$T/refused.out"))"
	grep -q "spool" "$T/refused.out" || fail "--spool $what: $(cat "$T/refused.out")"
	note "$what: $(tail -1 "$T/refused.out")"
}
printf 'precious %s\n' $(seq 200) >"$T/victim"
cp "$T/victim" "$T/victim.orig"
mkdir -m 0700 "$T/linked"
ln -s "$T/victim" "$T/linked/mtrace-ship.spool"
refused "with the spool file a symlink" "$T/linked"
mkdir -m 0700 "$T/foreign"
chown nobody "$T/foreign" || fail "chown nobody"
refused "owned by another user" "$T/foreign"
mkdir -m 0777 "$T/world"
refused "world-writable" "$T/world"
mkdir -m 0770 "$T/group"
refused "group-writable" "$T/group"
mkdir -m 1777 "$T/sticky"
refused "sticky and world-writable" "$T/sticky"
# the unit's layout: /var/lib/mtrace-ship -> private/mtrace-ship, 0700
mkdir -m 0700 -p "$T/private/state"
ln -s private/state "$T/state"
timeout 3 "$SHIP" -s "${HSOCK[h1]}" --nats "$NATS_URL" --host h1 --spool "$T/state" \
	>"$T/state.out" 2>&1
[ $? = 124 ] || fail "--spool through a root-owned symlink to a 0700 directory: $(cat "$T/state.out")"
[ -f "$T/private/state/mtrace-ship.spool" ] || fail "no spool in the private directory"
timeout 3 "$SHIP" -s "${HSOCK[h1]}" --nats "$NATS_URL" --host h1 --spool "$T/new" \
	>"$T/new.out" 2>&1
[ $? = 124 ] || fail "--spool to a directory to create: $(cat "$T/new.out")"
[ "$(stat -c %a "$T/new")" = 700 ] || fail "the spool directory was made $(stat -c %a "$T/new")"
note "a missing directory is made 0700; a root-owned symlink to a private one is taken"
pass "spool directory: a symlinked spool file, another owner, group or world write refused; a missing one made 0700"
