#!/usr/bin/env python3
"""js_ids.py PORT HOST_TOKEN [USER:PASS]: every message of the JetStream stream MTRACE on
the subjects of one host (mtrace.HOST_TOKEN.>), read one by one over the plain NATS protocol
($JS.API.STREAM.MSG.GET.MTRACE, no NATS library needed), with its message id
(Nats-Msg-Id, client/ship/msgid.h: <connection>-<n>-<tag>, <connection>-loss<n>-<tag> for
mtrace-ship's own Loss notices, and <id>/<k> for the parts of a message cut to fit the
server's max_payload; <connection> is the host token and 128 random bits).

Checks what mtrace-ship promises of the stream (docs/fleet.md, "Delivery"):
  once       no message id is stored twice (what was published again was de-duplicated);
  in order   on each subject, the ids of one connection to mtraced follow each other in
             the stream in the order they were given (parts in order);
  complete   the ids of each connection are 1..N, none missing (nothing lost), and
             each message cut in parts has parts 1..K.
Prints "MESSAGES CONNECTIONS" and exits 0, or says what is wrong and exits 1."""
import base64, json, re, socket, sys

port, host = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port), timeout=20)
f = s.makefile("rb")
f.readline()  # INFO
opts = {"verbose": False, "pedantic": False, "headers": False}
if len(sys.argv) > 3:
    opts["user"], _, opts["pass"] = sys.argv[3].partition(":")
s.sendall(b"CONNECT %s\r\nSUB _INBOX.ids.* 1\r\n" % json.dumps(opts).encode())


def answers(reqs):
    """Send the requests [(subject, body)] at once; their answers, in the same order."""
    out = [None] * len(reqs)
    buf = b"".join(b"PUB %s _INBOX.ids.%d %d\r\n%s\r\n" % (subj.encode(), i, len(body), body)
                   for i, (subj, body) in enumerate(reqs))
    s.sendall(buf + b"PING\r\n")
    left = len(reqs)
    while left:
        line = f.readline()
        if not line:
            sys.exit("js_ids.py: the server closed the connection")
        if line.startswith(b"PING"):
            s.sendall(b"PONG\r\n")
        elif line.startswith(b"MSG "):
            parts = line.split()
            body = f.read(int(parts[-1]) + 2)[:-2]
            i = int(parts[1].rsplit(b".", 1)[1])
            if out[i] is None:
                left -= 1
            out[i] = json.loads(body)
    return out


info = answers([("$JS.API.STREAM.INFO.MTRACE", b"")])[0]
if "error" in info:
    sys.exit("stream info: %s" % info["error"])
first, last = info["state"]["first_seq"], info["state"]["last_seq"]
prefix = "mtrace.%s." % host
ids = []  # (stream seq, subject, id) of the host's messages, in stream order
seq = first
while seq <= last:
    batch = list(range(seq, min(last, seq + 255) + 1))
    for n, a in zip(batch, answers([("$JS.API.STREAM.MSG.GET.MTRACE",
                                     json.dumps({"seq": n}).encode()) for n in batch])):
        if "error" in a:
            sys.exit("message %d: %s" % (n, a["error"]))
        m = a["message"]
        if not m["subject"].startswith(prefix):
            continue
        hdrs = base64.b64decode(m.get("hdrs") or "").decode("utf-8", "replace")
        mid = re.search(r"^Nats-Msg-Id:\s*(\S+)\s*$", hdrs, re.M | re.I)
        if not mid:
            sys.exit("message %d on %s has no Nats-Msg-Id" % (n, m["subject"]))
        ids.append((n, m["subject"], mid.group(1)))
    seq = batch[-1] + 1

bad = []
seen = {}
for n, subj, mid in ids:
    if mid in seen:
        bad.append("id %s stored twice: stream sequences %d and %d" % (mid, seen[mid], n))
    seen[mid] = n
last_on = {}      # (connection, subject) -> the last (number, part) seen there
numbers = {}      # connection -> the numbers of its messages
parts = {}        # (connection, number) -> the parts seen
for n, subj, mid in ids:
    whole, _, part = mid.partition("/")
    conn, num, _tag = whole.rsplit("-", 2)
    if num.startswith("loss"):
        continue  # the shipper's own notices: numbered apart
    num, part = int(num), int(part or 0)
    prev = last_on.get((conn, subj))
    if prev is not None and (num, part) <= prev:
        bad.append("out of order on %s: id %s (stream sequence %d) after %s-%d/%d"
                   % (subj, mid, n, conn, prev[0], prev[1]))
    last_on[(conn, subj)] = (num, part)
    numbers.setdefault(conn, set()).add(num)
    if part:
        parts.setdefault((conn, num), []).append(part)
for conn, nums in numbers.items():
    missing = sorted(set(range(1, max(nums) + 1)) - nums)
    if missing:
        bad.append("connection %s: %d ids missing (%s)" % (
            conn, len(missing), ", ".join(map(str, missing[:10]))))
for (conn, num), ks in parts.items():
    if sorted(ks) != list(range(1, max(ks) + 1)):
        bad.append("connection %s: message %d has parts %s" % (conn, num, sorted(ks)))
if bad:
    print("\n".join(bad[:20]))
    sys.exit(1)
if not ids:
    print("no messages of host %s in the stream" % host)
    sys.exit(1)
print(len(ids), len(numbers))
