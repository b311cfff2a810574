#!/usr/bin/env python3
"""fuzz_nats_seeds.py DIR - the seed corpus of fuzz-nats.c: messages of the stream as
mtrace-ship publishes them (each kind on its subject, hosts and domains escaped) and
the malformed kinds of js_bad.py, each as one byte of subject length, the subject, the
data.  Small (the fuzzer grows what it needs): the huge kinds are cut down."""
import os, sys

sys.path.insert(0, os.path.dirname(__file__))
from js_bad import KINDS, field, frame, loss, varint  # noqa: E402
from js_flood import batch, domain_up, vfield  # noqa: E402


def seed(subject, data):
    s = subject.encode()
    return bytes([len(s)]) + s + data


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    seeds = {
        "loss": seed("mtrace.h1._.events", loss(5)),
        "up": seed("mtrace.h1._.events", domain_up(3, "web")),
        "down": seed("mtrace.h1.web.events", frame(field(5, vfield(1, 3) + field(2, b"destroyed")))),
        "batch": seed("mtrace.h1.web.events", batch(3)),
        "batch-domid": seed("mtrace.h1._3.events", batch(3)),
        "hello": seed("mtrace.h1._.events", frame(field(1, field(2, b"mtraced 0.1.0")))),
        "goodbye": seed("mtrace.h1._.events", frame(field(8, field(1, b"stopping")))),
        "stats": seed("mtrace.h1._.stats", frame(field(3, vfield(1, 7) + field(2, vfield(1, 3) + field(2, b"web"))))),
        "escaped-host": seed("mtrace.bad%20host%FF._.events", loss(1)),
        "empty-host": seed("mtrace.%._.events", loss(1)),
        "escaped-domain": seed("mtrace.h1.a%2Eb.events", batch(1)),
    }
    for i, (name, subject, body) in enumerate(KINDS):
        if len(body) > 4096:
            body = body[:4096]
        seeds["bad-%02d" % i] = seed(subject, body)
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
