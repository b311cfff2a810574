#!/usr/bin/env python3
"""js_subjects.py PORT: the subjects of the JetStream stream MTRACE with their message
counts, one "SUBJECT COUNT" a line, asked of the server over the plain NATS protocol
($JS.API.STREAM.INFO.MTRACE with a subjects filter); no NATS library needed."""
import json, socket, sys

s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
f = s.makefile("rb")
f.readline()  # INFO
req = json.dumps({"subjects_filter": ">"}).encode()
s.sendall(b'CONNECT {"verbose":false,"pedantic":false,"headers":false}\r\n'
          b"SUB _INBOX.js 1\r\n"
          b"PUB $JS.API.STREAM.INFO.MTRACE _INBOX.js %d\r\n%s\r\nPING\r\n" % (len(req), req))
while True:
    line = f.readline()
    if not line:
        sys.exit("no answer")
    if line.startswith(b"MSG "):
        n = int(line.split()[-1])
        body = f.read(n + 2)[:n]
        break
info = json.loads(body)
if "error" in info:
    sys.exit("stream info: %s" % info["error"])
for subj, count in sorted(info["state"].get("subjects", {}).items()):
    sys.stdout.buffer.write(b"%s %d\n" % (subj.encode("utf-8", "surrogateescape"), count))
