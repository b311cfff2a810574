#!/usr/bin/env python3
"""make_vcpu_corpus.py DIR - the seed corpus of tests/daemon/fuzz-vcpu.c: windows of Xen
trace records as the hypervisor writes them (xen/common/trace.c), each window prefixed
by its CPU (1 byte) and length (2 bytes, little-endian), as the fuzz target reads them.
Run once; the files are committed."""
import os
import struct
import sys


def rec(ev, words, tsc=None):
    hdr = (ev & 0x0fffffff) | (len(words) << 28) | ((1 << 31) if tsc is not None else 0)
    out = struct.pack("<I", hdr)
    if tsc is not None:
        out += struct.pack("<Q", tsc)
    return out + b"".join(struct.pack("<I", w) for w in words)


def runstate(tsc, dom, vcpu, old, new):
    return rec(0x21001 | old << 8 | new << 4, [dom << 16 | vcpu], tsc)


def two(ev, tsc, dom, vcpu):
    return rec(ev, [dom, vcpu], tsc)


def window(cpu, data):
    return struct.pack("<BH", cpu, len(data)) + data


def pinned(n):
    """Two domains sharing pCPU 0: each runs, then waits runnable while the other runs."""
    w, t = b"", 10_000
    for i in range(n):
        a, b = (1, 2) if i % 2 == 0 else (2, 1)
        w += runstate(t, a, 0, 0, 1) + runstate(t + 1, b, 0, 1, 0)
        w += rec(0x2800a, [a, 0, b, 0], t + 2)
        t += 3000
    return window(0, w)


def two_cpus():
    """Domain 3 blocks on CPU 1, is woken from CPU 0, runs on CPU 1 again."""
    c0 = two(0x28004, 2_000, 3, 0) + runstate(2_000, 3, 0, 2, 1)
    c1a = runstate(1_000, 3, 0, 1, 0) + two(0x28006, 1_500, 3, 0) + runstate(1_500, 3, 0, 0, 2)
    c1b = runstate(2_500, 3, 0, 1, 0) + rec(0x21002, [3 << 16], 2_600)
    return window(1, c1a) + window(0, c0) + window(1, c1b)


def lost():
    """A loss on CPU 0 between two runs of domain 5, then the wrap padding."""
    w = runstate(100, 5, 1, 1, 0)
    w += rec(0x1f001, [17, 5 | 1 << 16, 150, 0], 400)
    w += runstate(500, 5, 1, 1, 0)
    w += rec(0x1f002, [0, 0, 0])
    return window(0, w)


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    for name, data in (("pinned", pinned(40)), ("two-cpus", two_cpus()), ("lost", lost())):
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
