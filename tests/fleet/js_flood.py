#!/usr/bin/env python3
"""js_flood.py - a publisher flooding mtrace-web --nats, for tests/fleet/test-web-flood.sh.

  js_flood.py PORT fakes N     N made-up hosts (fake1..fakeN), each with 5 domains
                               (a DomainUp each) and a batch of one event
  js_flood.py PORT stats H R   R rounds of forged Stats of about 1 MB from each of H
                               hosts (forged1..forgedH): a thousand domains named with
                               a kilobyte of control bytes (six times that in JSON), or
                               twenty thousand labels; every other round as a further
                               part of the last one (the same time_ns)
The Stats wait for the stream's acknowledgement each.
"""
import sys

sys.path.insert(0, __import__("os").path.dirname(__file__))
from js_bad import field, frame, varint, publish  # noqa: E402
from js_forge import Nats  # noqa: E402


def vfield(num, v):
    return varint(num << 3) + varint(v)


def domain_up(domid, name):
    return frame(field(4, vfield(1, domid) + field(2, name.encode())))


def batch(domid):  # EventBatch{domid, base_ts, ts_delta[1], op[1], thread[1], arg[1]}
    eb = (vfield(1, domid) + vfield(3, 1) + field(4, bytes(4)) + field(5, varint(0))
          + field(6, bytes(8)) + field(7, bytes(8)))
    return frame(field(2, eb))


def stats(time_ns, shape, k):
    if shape == 0:
        dom = vfield(1, 0) + field(2, bytes([1 + k % 30]) * 1000)
        body = vfield(1, time_ns) + b"".join(
            field(2, vfield(1, i) + dom[2:]) for i in range(1000))
    else:
        body = vfield(1, time_ns) + b"".join(
            field(4, vfield(1, i % 7) + field(2, b"\x02label-%06d-" % i + b"x" * 30))
            for i in range(20000))
    return frame(field(3, body))


def main():
    port, what = sys.argv[1], sys.argv[2]
    n = Nats(port, "-")
    if what == "fakes":
        # without waiting for each acknowledgement: the last one's says the server
        # has taken those before it on this connection
        last = int(sys.argv[3])
        for h in range(1, last + 1):
            for body in [domain_up(d, "dom%d" % d) for d in range(1, 6)] + [batch(1)]:
                subj = b"mtrace.fake%d._.events" % h
                n.s.sendall(b"PUB %s %d\r\n%s\r\n" % (subj, len(body), body))
        publish(n, "mtrace.fake%d._.events" % last, batch(1))
        return
    hosts, rounds = int(sys.argv[3]), int(sys.argv[4])
    t = 1000
    for r in range(rounds):
        if r % 2 == 0:
            t += 1  # a new Stats; odd rounds: a further part of it
        for h in range(1, hosts + 1):
            body = stats(t, r % 2 if r % 4 < 2 else 1 - r % 2, r)
            publish(n, "mtrace.forged%d._.stats" % h, body)


if __name__ == "__main__":
    main()
