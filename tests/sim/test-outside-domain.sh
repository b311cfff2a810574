#!/bin/bash
# What a new user meets first, on the simulated Xen: a guest program started from the
# shell (dom0, the reader's own domain) says so and exits non-zero instead of writing
# rings nobody reads; `mtrace-simxen create` names the rule a bad --name broke.
. "$MTRACE_SRC/tests/rig.sh"
sim_start
cd "$T" || exit 1
FIXTURE=$MTRACE_SRC/data/mirage/log-x86.sexp

outside() {	# NAME PROG ARGS...: must fail, saying it is not in a guest domain
	local name=$1 rc=0
	shift
	timeout 20 "$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
	[ "$rc" -ne 0 ] || fail "$name outside a domain exited 0: $(cat "$T/$name.err")"
	[ "$rc" -ne 124 ] || fail "$name outside a domain hung"
	grep -q "not running in a guest domain" "$T/$name.err" ||
		fail "$name outside a domain did not say so: $(cat "$T/$name.err")"
}
outside replay "$REPLAY" --passes 1 "$FIXTURE"
outside load "$LOAD" -N 1 -n 10
outside mprof "$MPROF_GUEST" --live --count 10
# The same programs in a domain are fine (the message is about where, not what).
dom=$(guest in-domain -- "$REPLAY" --passes 1 "$FIXTURE") || fail "guest"
wait_until 20 grep -q "events in 1 pass" "$T/in-domain.log" || fail "replay in a domain"
grep -q "not running in a guest domain" "$T/in-domain.log" && fail "replay in dom$dom refused"

bad_name() {	# NAME: refused with status 2, the rule named, hostile bytes escaped
	local rc=0
	"$SIMXEN" --dir "$SIM" create --name "$1" -- /bin/true >"$T/create.out" 2>"$T/create.err" || rc=$?
	[ "$rc" -eq 2 ] || fail "create --name '$1': status $rc, not 2"
	grep -qF "printable ASCII characters, no space and no '/'" "$T/create.err" ||
		fail "create --name '$1' does not name the rule: $(cat "$T/create.err")"
	! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f-\xff]' "$T/create.err" ||
		fail "create --name: raw control bytes in the message"
	[ ! -s "$T/create.out" ] || fail "create --name '$1' printed a domid"
}
bad_name 'a b'
bad_name 'a/b'
bad_name ''
bad_name "$(printf 'x%.0s' {1..64})"
bad_name "$(printf 'e\033[31m\xff')"
ok=$("$SIMXEN" --dir "$SIM" create --name '<b>' -- /bin/true) || fail "create --name '<b>'"
[ -n "$ok" ] || fail "create --name '<b>' printed no domid"
pass "guest programs outside a domain, simxen create --name"
