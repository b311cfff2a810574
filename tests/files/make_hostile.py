#!/usr/bin/env python3
"""Write a recording whose messages are hostile, as a damaged file or a broken peer
could make them: strings that are not UTF-8 (protobuf-c does not check), control
bytes, string references past the dictionary, ops no one knows, thread ids at the
ends of the range, a clock that steps back, GCs longer than the time since boot,
columns of unequal length, a domain name with quotes and escapes.

Usage: make_hostile.py OUT
"""
import struct
import sys

MAGIC = b"\x89MTRC\r\n\x1a"


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def key(field, wt):
    return varint(field << 3 | wt)


def vfield(field, v):
    return key(field, 0) + varint(v)


def bfield(field, b):
    return key(field, 2) + varint(len(b)) + b


def packed(field, fmt, vals):
    if fmt == "v":
        return bfield(field, b"".join(varint(v) for v in vals))
    return bfield(field, b"".join(struct.pack("<" + fmt, v) for v in vals))


def batch(domid, ring, base, deltas, ops, threads, args, types, strs, refs):
    b = vfield(1, domid) + vfield(2, ring) + vfield(3, base)
    b += packed(4, "i", deltas) + packed(5, "v", ops) + packed(6, "q", threads)
    b += packed(7, "q", args)
    if types is not None:
        b += packed(8, "v", types)
    for s in strs:
        b += bfield(9, s)
    b += vfield(10, 1) + packed(12, "v", refs)
    return bfield(2, b)


def frame(msg):
    return varint(len(msg)) + msg


def main():
    out = bytearray(MAGIC + struct.pack("<HHI", 1, 16, 0))
    out += frame(bfield(1, vfield(1, 1) + bfield(2, b"mtraced \xff\"evil\\") +
                        bfield(3, b"host\n\x1b[2J")))
    for d, name in ((3, b"dom\"3\\ \x01\x7f\xff\xfe"), (4, b"")):
        out += frame(bfield(4, vfield(1, d) + bfield(2, name) + vfield(3, 2) + vfield(4, 1)))
    strs = [b"\xff\xfe\xc3(", b"\"quote\\", b"ctl\x01\x1b[31m\x7f", b"", b"ok \xe2\x82\xac"]
    big = (1 << 63) - 1
    ops = [0, 5, 7, 1, 2, 3, 6, 11, 8, 9, 4, 10, 12, 13, 64, 65, 66, 200, 255, 5, 3, 7, 0]
    n = len(ops)
    threads = [1, 2, 2, -1, 1, big, 2, 2, -1, -(1 << 63), 2, 1, 1, 1, -1, 2, -1, 5, 6, 2,
               1, 1 << 45, -5]
    args = [2, 0, 0, 2, 2, 1, -(1 << 63), big, big, 2, 1, 2, 3, 3, 7, 7, 0, 9, 9, 0, 2, 0,
            1 << 45]
    deltas = [0, 10, -100, 2**31 - 1, -2**31, 5, 5, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
              1, 1, 1]
    refs = [0, 1, 2, 3, 4, 99, 0, 1, 2, 3]
    out += frame(batch(3, 0, 5, deltas, ops, threads, args, [99] * n, strs, refs))
    # the same on another ring with no type column and no strings at all
    out += frame(batch(3, 70000, 1 << 62, deltas, ops, threads, args, None, [], []))
    # unequal columns: refused, not read past
    out += frame(batch(4, 0, 1, [0, 1], [5, 5, 5], [1], [1, 2], [1], strs, [0, 1, 2]))
    out += frame(bfield(5, vfield(1, 3) + bfield(2, b"crashed \xff\x1b")))
    out += frame(bfield(6, vfield(1, 3) + vfield(2, 0) + vfield(3, 7) + vfield(4, 0)))
    out += frame(bfield(8, bfield(1, b"bye \"\xff")))
    open(sys.argv[1], "wb").write(out)


if __name__ == "__main__":
    main()
