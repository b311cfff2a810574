#!/usr/bin/env python3
"""fuzz_spool_seeds.py DIR: the seed corpus of fuzz-spool.c (tests/fleet/fuzz-spool-corpus),
made again: spooled records as the target reads them (a limit byte, the subject's and the
id's lengths, the subject, the id, the payload), of an event batch with strings, a Stats
of twelve domains with counters, a DomainDown and records no shipper may publish."""
import os, struct, sys


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])


def key(num, wire):
    return varint(num << 3 | wire)


def ld(num, payload):
    return key(num, 2) + varint(len(payload)) + payload


def vi(num, v):
    return key(num, 0) + varint(v)


def frame(msg):
    return varint(len(msg)) + msg


def batch():
    n = 64
    ops = [[1, 5, 7, 6, 0, 3][i % 6] for i in range(n)]
    refs = [i % 4 for i in range(n) if ops[i] in (3, 5, 6)]
    strs = [b"a label", b"counter-1", b"Not_found", b"another label"]
    b = vi(1, 3) + vi(3, 1000000)
    b += ld(4, b"".join(struct.pack("<i", (i * 37 % 11) - 3 if i else 0) for i in range(n)))
    b += ld(5, b"".join(varint(o) for o in ops))
    b += ld(6, b"".join(struct.pack("<q", i % 5) for i in range(n)))
    b += ld(7, b"".join(struct.pack("<q", i * 1000) for i in range(n)))
    b += ld(8, b"".join(varint(0) for _ in range(n)))
    b += b"".join(ld(9, s) for s in strs) + vi(11, 77)
    b += ld(12, b"".join(varint(r) for r in refs))
    return frame(ld(2, b))


def stats():
    counter = ld(1, b"a counter with a name") + vi(2, 5)
    dom = lambda i: vi(1, i) + ld(2, b"guest") + b"".join(ld(15, counter) for _ in range(3))
    return frame(ld(3, vi(1, 42) + b"".join(ld(2, dom(i)) for i in range(12))))


def record(limit, subject, ident, payload):
    return bytes([limit, len(subject), len(ident)]) + subject + ident + payload


seeds = {
    "batch": record(2, b"mtrace.h1.web.events", b"h1-0123456789abcdef-7-0123456789abcdef", batch()),
    "batch-escaped": record(40, b"mtrace.h1.a%2Eb.events", b"h1-x-1-y/2", batch()),
    "stats": record(3, b"mtrace.h1._.stats", b"h1-s-2-z", stats()),
    "down": record(0, b"mtrace.h1._5.events", b"h1-d-3-z", frame(ld(5, vi(1, 5) + ld(2, b"gone")))),
    "purge": record(1, b"$JS.API.STREAM.PURGE.MTRACE", b"h1-p-4-z", b"{}"),
}
os.makedirs(sys.argv[1], exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(sys.argv[1], name), "wb") as f:
        f.write(data)
