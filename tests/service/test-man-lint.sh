#!/bin/bash
# The man pages format without a single groff/mdoc warning, every cross reference
# to an mtrace page points at a page that exists, and the guest library's page
# covers its header.
. "$MTRACE_SRC/tests/rig.sh"
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
# mtrace-guest(3) documents every function of <mtrace-guest.h> but the hot path's
# internals (emit, clock, the kick and make-room slow paths).
guest_h=$MTRACE_SOURCE_ROOT/guest/mtrace-guest.h
page=$MTRACE_SOURCE_ROOT/docs/man/mtrace-guest.3
for f in $(grep -o 'mtrace_[a-z_]*(' "$guest_h" | tr -d '(' | sort -u); do
	case $f in mtrace_emit_*|mtrace_now|mtrace_ring_kick|mtrace_ring_make_room) continue;; esac
	grep -q "^\.Fn $f\b" "$page" || fail "mtrace-guest.3 does not document $f"
done
echo "ok"
