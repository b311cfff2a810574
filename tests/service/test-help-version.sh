#!/bin/bash
# Every installed program answers --help (usage on stdout) and --version (the project
# version) with exit status 0, without a terminal, a daemon or Xen.
. "$MTRACE_SRC/tests/rig.sh"

install_destdir
export LD_LIBRARY_PATH=$D$MTRACE_LIBDIR
expected="mtraced mtrace-cat mtrace-top mtrace-simxen mtrace-load"

for p in $expected; do
	[ -x "$D$MTRACE_BINDIR/$p" ] || [ -x "$D$MTRACE_SBINDIR/$p" ] ||
		fail "$p is not installed (bindir $MTRACE_BINDIR, sbindir $MTRACE_SBINDIR)"
done

n=0
for f in "$D$MTRACE_BINDIR"/* "$D$MTRACE_SBINDIR"/*; do
	[ -f "$f" ] && [ -x "$f" ] || continue
	p=$(basename "$f")
	timeout 10 "$f" --help </dev/null >"$T/help.out" 2>"$T/help.err"
	rc=$?
	[ $rc = 0 ] || { cat "$T/help.err"; fail "$p --help exited $rc"; }
	grep -qi "usage" "$T/help.out" || { cat "$T/help.out"; fail "$p --help printed no usage on stdout"; }
	timeout 10 "$f" --version </dev/null >"$T/version.out" 2>"$T/version.err"
	rc=$?
	[ $rc = 0 ] || { cat "$T/version.err"; fail "$p --version exited $rc"; }
	grep -qF "$MTRACE_VERSION" "$T/version.out" ||
		{ cat "$T/version.out"; fail "$p --version does not say $MTRACE_VERSION"; }
	# One option vocabulary (docs/HACKING.md): a shared letter means one thing.
	# The rows marked *held*; -n has one meaning (stop after N) under three names.
	for pair in s:socket l:listen h:help V:version q:quiet p:pages b:batch B:backend \
		c:config d:delay D:domain f:format F:filter g:labels x:sites X:site-tree \
		L:depth i:input 'n:(iterations|count|events)' N:threads o:ops O:output \
		w:write r:reverse R:no-reconnect t:tree T:token-file; do
		bad=$(grep -oE -- "(^|[ ,])-${pair%%:*}, --[a-z-]+" "$T/help.out" |
			grep -vE -- "--${pair#*:}\$" || true)
		[ -z "$bad" ] || fail "$p --help: '$bad' (-${pair%%:*} is --${pair#*:} everywhere)"
	done
	echo "$p: --help and --version ok ($(head -1 "$T/version.out"))"
	n=$((n + 1))
done
[ $n -ge 5 ] || fail "only $n programs checked"
echo "ok"
