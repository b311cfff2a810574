#!/bin/bash
# The old spellings of options (letters docs/HACKING.md's table now gives another
# meaning) still parse, and each says on stderr what to write instead.  An old letter
# before --help: parsed (else getopt refuses it: usage on stderr, exit 2), then the
# help exits 0.
. "$MTRACE_SRC/tests/rig.sh"

install_destdir
export LD_LIBRARY_PATH=$D$MTRACE_LIBDIR

bin() { if [ -x "$D$MTRACE_BINDIR/$1" ]; then echo "$D$MTRACE_BINDIR/$1"; else echo "$D$MTRACE_SBINDIR/$1"; fi; }

n=0
check() { # program, what the warning says to write, old-spelling arguments...
	local p=$1 now=$2
	shift 2
	timeout 10 "$(bin "$p")" "$@" --help </dev/null >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc = 0 ] || { cat "$T/err"; fail "$p $*: exit $rc (the old spelling is refused)"; }
	grep -qF -- "-${1#-} is an old spelling; use $now" "$T/err" ||
		{ cat "$T/err"; fail "$p $*: no warning naming $now"; }
	n=$((n + 1))
}

check mtraced --set -o log_level=3
check mtraced --foreground -f
check mtrace-cat "-D (--domain)" -d 1
check mtrace-cat --time -t 5
check mtrace-cat --label -l x
check mtrace-top --sort -o R
check mtrace-top "-X (--site-tree)" -c
check mtrace-top --finished -f
check mtrace-web "-T (--token-file)" -t /dev/null
check mtrace-exporter --textfile -t /tmp
check mtrace-exporter --interval -i 1000
check mtrace-replay --passes -c 2
check mtrace-replay --speed -s 2
check mtrace-replay --loop -l
check mtrace-load --rings -r 2
check mtrace-load "-N (--threads)" -t 4
check mtrace-load --counters -c 2
check mtrace-load --rate -R 100
check mtrace-load --duration -d 1
check mtrace-load --seed -s 3
check mtrace-load --labels -l 2
check mtrace-simxen --dir -d /tmp

echo "ok: $n old spellings parse and warn"
