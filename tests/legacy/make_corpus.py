#!/usr/bin/env python3
"""Writes the seed corpus of fuzz-mprof (fuzz-corpus/): ref lists, and pairs of small
mirage-profile buffers (a poll, then a later poll) made by a minimal writer from the
format description.  Run once; the files are shipped."""
import os
import struct

UUID = bytes.fromhex("05883b8d521a487bb397456ab150680c")
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz-corpus")


class Buf:
    def __init__(self, size, first_count=0):
        self.b = bytearray(size)
        self.ps = size // 4
        self.starts = [i * self.ps for i in range(4)]
        self.ends = [s + self.ps for s in self.starts]
        self.ends[3] = size
        for i in range(4):
            s = self.starts[i]
            struct.pack_into("<I16sIH", self.b, s, 0xC1FC1FC1, UUID,
                             (self.ends[i] - s) * 8, (first_count + i) & 0xFFFF)
            self.content(i, s + 30)
        self.active, self.next, self.count = 0, 30, first_count + 1

    def content(self, i, end):
        bits = (end - self.starts[i]) * 8
        struct.pack_into("<HH", self.b, self.starts[i] + 26, bits & 0xFFFF, bits >> 16)

    def event(self, ts, op, payload):
        n = 9 + len(payload)
        while self.next + n >= self.ends[self.active]:
            self.active = (self.active + 1) % 4
            s = self.starts[self.active]
            struct.pack_into("<H", self.b, s + 24, self.count & 0xFFFF)
            self.count += 1
            self.content(self.active, s + 30)
            self.next = s + 30
        at = self.next
        self.next += n
        self.content(self.active, self.next)
        self.b[at:at + n] = struct.pack("<QB", ts, op) + payload


def events(buf, k0, k1):
    for i in range(k0, k1):
        op = i % 12
        th = struct.pack("<q", i % 9 - 1)
        if op == 0:
            p = th + struct.pack("<qB", i, i % 21)
        elif op in (3, 6, 11):
            p = th + struct.pack("<q", i) + b"x%d\0" % i
        elif op == 5:
            p = th + b"lbl%d\0" % (i % 5)
        elif op in (7, 8):
            p = th
        else:
            p = th + struct.pack("<q", i)
        buf.event(1000 + i, op, p)


def pair(name, size, n0, n1, first_count=0):
    b = Buf(size, first_count)
    events(b, 0, n0)
    a = bytes(b.b)
    events(b, n0, n1)
    open(os.path.join(OUT, name), "wb").write(b"\x01" + a + bytes(b.b))


os.makedirs(OUT, exist_ok=True)
for name, val in [("refs-ok", b"\x00\x00" + b"1,2,3"), ("refs-cap", b"\x00\x04" + b"8,9,10,11,12"),
                  ("refs-max", b"\x00\x00" + b"4294967295,0"), ("refs-bad", b"\x00\x00" + b"1,,02, 3")]:
    open(os.path.join(OUT, name), "wb").write(val)
pair("buf-fresh", 320, 0, 3)
pair("buf-grow", 320, 5, 12)
pair("buf-wrap", 256, 10, 60)
pair("buf-counter-wrap", 400, 20, 90, first_count=65530)
