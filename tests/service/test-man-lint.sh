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
# internals (emit and the record reserve/publish steps, the clock and its TSC calibration, the kick and make-room slow paths).
guest_h=$MTRACE_SOURCE_ROOT/guest/mtrace-guest.h
page=$MTRACE_SOURCE_ROOT/docs/man/mtrace-guest.3
for f in $(grep -o 'mtrace_[a-z_]*(' "$guest_h" | tr -d '(' | sort -u); do
	case $f in mtrace_emit_*|mtrace_rec_*|mtrace_creates_at_ts|mtrace_here|mtrace_now|mtrace_rdtsc|mtrace_tsc_*|mtrace_ring_kick|mtrace_ring_make_room) continue;; esac
	grep -q "^\.Fn $f\b" "$page" || fail "mtrace-guest.3 does not document $f"
done
echo "ok"
# Every format mtrace-cat's -f parser (cat-args.c) accepts is in mtrace-cat(1)'s synopsis and in
# README's table of programs; README's examples name the socket with -s, as every
# program's --help does (mtrace-top's -S is only an alias).
src=$MTRACE_SOURCE_ROOT
fmts=$(sed -n "/case 'f':/,/else {/p" "$src/client/cat/cat-args.c" |
	sed -n 's/.*strcmp(optarg, "\([a-z]*\)").*/\1/p')
[ "$(echo "$fmts" | wc -w)" -ge 7 ] || fail "found only '$fmts' in mtrace-cat's -f parser"
synopsis=$(sed -n '/^\.Sh SYNOPSIS/,/^\.Sh DESCRIPTION/p' "$src/docs/man/mtrace-cat.1" | grep '^\.Op Fl f Cm')
row=$(grep '^| `mtrace-cat`' "$src/README.md" | grep -o '\[-f [a-z\\|]*\]')
for f in $fmts; do
	echo "$synopsis" | grep -qw "$f" || fail "mtrace-cat.1's synopsis lacks -f $f: $synopsis"
	echo "$row" | grep -qw "$f" || fail "README's mtrace-cat row lacks -f $f: $row"
done
! grep -n 'mtrace-top -S' "$src/README.md" || fail "README uses mtrace-top -S (the option is -s)"
echo "formats in synopsis and README: $(echo $fmts)"
