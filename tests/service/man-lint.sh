#!/bin/bash
# The man pages format without a single groff/mdoc warning, and every cross
# reference to an mtrace page points at a page that exists.
. "$(dirname "$0")/lib.sh"
have=" "
for m in "$@"; do have+="$(basename "$m") "; done
for m in "$@"; do
	groff -mandoc -ww -Tutf8 "$m" >/dev/null 2>"$T/warn"
	[ -s "$T/warn" ] && { cat "$T/warn"; fail "$(basename "$m"): groff warnings"; }
	# .Xr mtrace-foo N -> mtrace-foo.N must be one of ours.
	for ref in $(sed -n 's/^\.Xr \(mtrace[a-z-]*\) \([0-9]\).*/\1.\2/p' "$m"); do
		case "$have" in *" $ref "*) ;; *) fail "$(basename "$m") refers to $ref, which is not installed";; esac
	done
	echo "$(basename "$m"): ok"
done
echo "ok"
