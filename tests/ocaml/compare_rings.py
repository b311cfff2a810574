#!/usr/bin/env python3
"""compare_rings.py C_DUMP OCAML_DUMP: the two rings (header page + data pages) must be
byte-identical.  On a difference, print the first differing offset, which header field
or which record (by walking the C ring) it falls in, and both bytes; exit 1.  Otherwise
print what the ring went through (wraps, overwritten bytes, notifies, PADs in view)."""
import struct
import sys

PAGE = 4096
HDR_FIELDS = [(0, 4, "magic"), (4, 2, "version"), (6, 2, "hdr_size"), (8, 4, "data_pages"),
              (12, 4, "clock"), (16, 4, "ring_index"), (20, 4, "flags"), (24, 40, "name"),
              (64, 64, "time"), (128, 8, "head"), (136, 8, "tail"), (144, 8, "notifies"),
              (192, 8, "req_event"), (200, 8, "reader_pos")]


def where(c, off):
    if off < PAGE:
        for o, n, name in HDR_FIELDS:
            if o <= off < o + n:
                return "header field %s (+%d)" % (name, off - o)
        return "header byte %d" % off
    d = off - PAGE
    size = len(c) - PAGE
    head, tail = struct.unpack_from("<QQ", c, 128)
    pos = tail
    while pos < head:
        o = pos % size
        ln, op = struct.unpack_from("<HB", c, PAGE + o)
        if ln < 8:
            break
        if o <= d < o + ln:
            return "data offset %d: record op %d len %d at +%d (ring position %d)" % (
                d, op, ln, d - o, pos)
        pos += ln
    return "data offset %d (outside the live records)" % d


def main():
    c = open(sys.argv[1], "rb").read()
    o = open(sys.argv[2], "rb").read()
    if len(c) != len(o):
        print("FAIL: sizes differ: C %d bytes, OCaml %d" % (len(c), len(o)))
        return 1
    for i in range(len(c)):
        if c[i] != o[i]:
            ndiff = sum(1 for a, b in zip(c, o) if a != b)
            print("FAIL: %d bytes differ; first at byte %d, %s: C %#04x, OCaml %#04x" % (
                ndiff, i, where(c, i), c[i], o[i]))
            return 1
    size = len(c) - PAGE
    head, tail, notifies = struct.unpack_from("<QQQ", c, 128)
    pads, pos, ops = 0, tail, set()
    while pos < head:
        ln, op = struct.unpack_from("<HB", c, PAGE + pos % size)
        pads += op == 255
        ops.add(op)
        pos += ln
    print("identical: %d bytes, head %d (%d wraps), tail %d, %d notifies, %d PADs and ops %s in view"
          % (len(c), head, head // size, tail, notifies, pads, sorted(ops)))
    return 0


sys.exit(main())
