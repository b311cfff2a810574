#!/usr/bin/env python3
"""js_stepdown.py CLIENT_PORT: ask the cluster to move the leadership of the stream MTRACE
to another node ($JS.API.STREAM.LEADER.STEPDOWN.MTRACE, a plain NATS request over the
client protocol); prints the API's JSON answer, exits 1 without one within 5 s."""
import json, socket, sys, time

s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
f = s.makefile("rb")
f.readline()  # INFO
s.sendall(b'CONNECT {"verbose":false,"pedantic":false}\r\nSUB _INBOX.stepdown 1\r\n'
          b"PUB $JS.API.STREAM.LEADER.STEPDOWN.MTRACE _INBOX.stepdown 0\r\n\r\nPING\r\n")
end = time.monotonic() + 5
while time.monotonic() < end:
    line = f.readline()
    if not line:
        break
    if line.startswith(b"PING"):
        s.sendall(b"PONG\r\n")
    elif line.startswith(b"MSG "):
        body = f.read(int(line.split()[-1]) + 2)[:-2]
        print(json.dumps(json.loads(body)))
        sys.exit(0)
sys.exit(1)
