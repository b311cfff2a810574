#!/usr/bin/env python3
"""Write a scripted sequence of ring calls that ring-c (guest/ring.c) and ring-ocaml
(Mtrace_ring) both replay: every op, every thread type, sites, strings at every length
edge (0, 1, 7, 8, 9 ... around MTRACE_SITE_NAME_MAX and MTRACE_STR_MAX, embedded NUL),
req_event wake-ups, and enough records to wrap, pad and overwrite many times.

Line format:  init PAGES CLOCK INDEX NAMEHEX | reqrel DELTA |
              OP TS THREAD ARG TYPE SITE HEX     (HEX "-" = empty string)
"""
import random
import sys

STR_MAX = 4096 - 32 - 1
SITE_MAX = 255
FIXED = ["read", "fulfills", "becomes", "switch", "gc", "signal", "try_read",
         "evtchn_send", "evtchn_recv", "creates"]
STRS = ["label", "fails", "increase", "counter"]
TYPES = list(range(20)) + [99]


def hexs(b):
    return b.hex() if b else "-"


def main():
    pages, seed, count = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    rnd = random.Random(seed)
    out = []
    name = b"ocaml-ring-test-name-longer-than-39-bytes-here"[: rnd.choice([0, 1, 7, 8, 39, 45])]
    out.append("init %d 1 %d %s" % (pages, rnd.randrange(64), hexs(name)))
    ts = rnd.randrange(1 << 40)
    lens = list(range(0, 41)) + list(range(SITE_MAX - 9, SITE_MAX + 10)) + \
        list(range(STR_MAX - 12, STR_MAX + 12)) + [1000, 2047, 2048, 2049]

    def thread():
        return rnd.choice([-1, 0, 1, rnd.randrange(1 << 20), (1 << 62) - 1, -(1 << 62)])

    def string(n):
        b = bytes(rnd.randrange(1, 256) for _ in range(n))
        if n > 3 and rnd.random() < 0.1:  # a NUL inside: C stops there, so must OCaml
            i = rnd.randrange(n)
            b = b[:i] + b"\0" + b[i + 1:]
        return b

    out.append("ring_start %d -1 0 0 0 -" % ts)
    for i in range(count):
        ts += rnd.randrange(1000)
        r = rnd.random()
        if r < 0.03:
            out.append("reqrel %d" % rnd.choice([0, 8, 32, 33, 48, 100, 4096, -8]))
            continue
        if i < len(lens):  # every length edge once, in order, then at random
            n = lens[i]
            op = STRS[i % len(STRS)] if i % 5 else "site_name"
        elif r < 0.25:
            n = rnd.choice(lens)
            op = rnd.choice(STRS + ["site_name"])
        else:
            op = rnd.choice(FIXED + ["creates_named", "creates_pc"])
            n = 0
        arg = rnd.choice([0, 1, -1, rnd.randrange(1 << 32), (1 << 62) - 1, -rnd.randrange(1 << 40)])
        if op in ("evtchn_send", "evtchn_recv"):
            arg = rnd.randrange(1 << 32)
        site = rnd.randrange(1, 1 << 62) if op.startswith("creates_") else 0
        ty = rnd.choice(TYPES) if op.startswith("creates") else 0
        s = hexs(string(n)) if op in STRS or op == "site_name" else "-"
        out.append("%s %d %d %d %d %d %s" % (op, ts, thread(), arg, ty, site, s))
    out.append("ring_start %d -1 0 0 0 -" % (ts + 1))
    print("\n".join(out))


main()
