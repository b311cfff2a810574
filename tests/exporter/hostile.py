#!/usr/bin/env python3
"""hostile.py OUT N - a 2014-style trace whose labels and counter names carry what the
exposition formats must escape or replace: quotes, backslashes, newlines, bytes that are
not UTF-8, values that collide once replaced, the fold's own name, then N distinct
labels and N distinct counter names (past every cap)."""
import sys

NASTY = [b'quote"in', b'back\\slash', b'new\nline', b'bad\xffutf8', b'x\xfe', b'x\xff',
         b'other', b'\xc0\xaf', b'tab\tcr\r', b'{}=,"\\', '\u00fcn\u00efc\u00f6d\u00e9 \u2713'.encode()]


def sx(b):
    """An OCaml/sexplib string literal for bytes b."""
    out = '"'
    for c in b:
        if c == 0x22:
            out += '\\"'
        elif c == 0x5c:
            out += '\\\\'
        elif c == 0x0a:
            out += '\\n'
        elif 0x20 <= c < 0x7f:
            out += chr(c)
        else:
            out += '\\x%02x' % c
    return out + '"'


def main():
    out, n = sys.argv[1], int(sys.argv[2])
    names = NASTY + [b'lbl-%05d' % i for i in range(n)]
    t, tid = 1.0, 1
    with open(out, "w") as f:
        for i, name in enumerate(names):
            tid += 1
            f.write('((time %.6f)(op(Creates 0 %d Task)))\n' % (t, tid))
            f.write('((time %.6f)(op(Label %d %s)))\n' % (t, tid, sx(name)))
            f.write('((time %.6f)(op(Increases %d %s %d)))\n' % (t, tid, sx(name), i + 1))
            t += 0.000001
            if i % 3 == 0:      # some resolve: lifetimes in the summary
                f.write('((time %.6f)(op(Resolves 0 %d())))\n' % (t, tid))
        t += 0.000001


if __name__ == "__main__":
    main()
