#!/usr/bin/env python3
"""js_bad.py - messages in the stream MTRACE that are not what mtrace-ship publishes, for
tests/fleet/test-bad-msgs.sh: anyone allowed to publish on mtrace.> can store them, and
a reader must skip each, count it under the host its subject names, and go on.

  js_bad.py PORT round     publish one round (each malformed kind once; see KINDS) and
                           print the counts a reader must find: {"HOST": N, ...} with ""
                           for subjects that name no host
  js_bad.py PORT wrap      two valid Loss notices of 2^63 dropped events, on mtrace.h2
                           (a sum that must saturate, not wrap to 0)
Every message is published with a reply subject: the stream's acknowledgement (its
sequence) is awaited, so that the message is in the stream when this returns.
"""
import json, random, sys

HERE = __import__("os").path.dirname(__import__("os").path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, __import__("os").path.join(HERE, "..", "lib"))
from js_forge import Nats, LOSS0  # noqa: E402
from protowire import field as wire_field, frame, varint  # noqa: E402


def field(num, body):  # a length-delimited field
    return wire_field(num, 2, body)


def loss(dropped):  # ServerMsg{loss{dropped_for_client}}
    return frame(field(6, b"\x20" + varint(dropped)))


rnd = random.Random(36)
E1, S1 = "mtrace.h1._.events", "mtrace.h1._.stats"
KINDS = [
    # (name, subject, payload)
    ("empty", E1, b""),
    ("truncated", E1, LOSS0[:-1]),
    ("lying frame length", E1, b"\x7f" + LOSS0[1:]),
    ("lying inner length", E1, bytes([4, 0x32, 0x10, 0x20, 0])),
    ("two frames", E1, LOSS0 + LOSS0),
    ("garbage", E1, b"\xff" * 10 + bytes(rnd.randrange(256) for _ in range(300))),
    ("a Pong (not published)", E1, frame(field(9, b""))),
    ("a message of no kind", E1, frame(b"")),
    ("a Stats on events", E1, frame(field(3, b""))),
    ("a Loss on stats", S1, LOSS0),
    ("huge (over mtraced's 4 MiB frames)", E1, varint(5 << 20) + bytes(5 << 20)),
    # 100 000 empty domains: 200 kB that unpack to about 20 MB
    ("a Stats that unpacks 100x", S1, frame(field(3, b"\x12\x00" * 100000))),
    ("a kind neither events nor stats", "mtrace.h1._.bogus", LOSS0),
    ("a domain token escape does not write", "mtrace.h1.a_b.events", LOSS0),
    ("empty on h2", "mtrace.h2._.events", b""),
    ("two frames on h2", "mtrace.h2._.events", LOSS0 + LOSS0),
    ("garbage on h2", "mtrace.h2._.events", b"\x80" * 64),
    # a valid Loss of 7 events each, on host tokens that would show as h1 if unescape
    # were not escape's exact inverse
    ("alias h%31", "mtrace.h%31._.events", loss(7)),
    ("alias h1%00zz", "mtrace.h1%00zz._.events", loss(7)),
    ("no tokens", "mtrace.x", LOSS0),
]
HOST = {"mtrace.h1": "h1", "mtrace.h2": "h2"}


def publish(n, subject, body):
    a = n.request(subject, body, timeout=10)
    if not a or b'"seq"' not in a:
        sys.exit("js_bad.py: %s: not stored: %r %s" % (subject, a, n.errors))


def main():
    port, what = sys.argv[1], sys.argv[2]
    n = Nats(port, "-")
    if what == "wrap":
        for _ in range(2):
            publish(n, "mtrace.h2._.events", loss(1 << 63))
        print("ok")
        return
    counts = {}
    for name, subject, body in KINDS:
        publish(n, subject, body)
        host = HOST.get(".".join(subject.split(".")[:2]), "")
        counts[host] = counts.get(host, 0) + 1
    print(json.dumps(counts, sort_keys=True))


if __name__ == "__main__":
    main()
