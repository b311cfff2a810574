#!/usr/bin/env python3
"""js_forge.py - a hostile fleet member over the plain NATS protocol (no NATS library
needed), for tests/fleet/test-ids.sh.

  js_forge.py PORT USER:PASS create   (USER:PASS "-": no user)
      create the stream MTRACE (subjects mtrace.>, duplicate window 10 min), as the
      administrator does beforehand (docs/fleet.md)
  js_forge.py PORT USER:PASS pub SUBJECT ID
      publish one message (a Loss notice of 0 events) with Nats-Msg-Id ID, as JetStream
      publishes go (a reply subject for the acknowledgement): prints the answer
  js_forge.py PORT USER:PASS try SUBJECT
      publish one message with a reply subject: prints "refused" (the server said
      Permissions Violation) or "answered" (anything came back) and exits 0
  js_forge.py PORT READER:PASS FORGER:PASS claim SUBJECTS OWN STOPFILE
      until STOPFILE exists: read the newest message on the victim's SUBJECTS (comma
      separated) in the stream (as READER), take its Nats-Msg-Id and publish, as
      FORGER on mtrace.OWN._.events, the ids that follow it (the last decimal field of the id, dash-separated, plus
      1..AHEAD), so that the stream's de-duplication drops the victim's messages that
      would carry them, if its ids are predictable.  Prints "claimed N ids, last seen
      ID" at the end.
"""
import base64, json, os, re, socket, sys, time

AHEAD = 2000
# a Loss notice of 0 events: a valid frame, harmless to any reader
LOSS0 = bytes([4, 0x32, 2, 0x20, 0])


class Nats:
    def __init__(self, port, cred):
        user, _, pw = cred.partition(":")
        self.s = socket.create_connection(("127.0.0.1", int(port)), timeout=10)
        self.f = self.s.makefile("rb")
        self.f.readline()  # INFO
        opts = {"verbose": False, "pedantic": False, "headers": True}
        if cred != "-":
            opts.update(user=user, **{"pass": pw})
        self.s.sendall(b"CONNECT %s\r\nPING\r\n" % json.dumps(opts).encode())
        self.errors = []
        self.wait_pong()
        self.sid = 0

    def line(self):
        l = self.f.readline()
        if not l:
            sys.exit("js_forge.py: the server closed the connection (%s)" % self.errors)
        return l

    def wait_pong(self):
        while True:
            l = self.line()
            if l.startswith(b"PONG"):
                return
            if l.startswith(b"-ERR"):
                self.errors.append(l.decode(errors="replace").strip())
                if b"Authorization" in l:
                    sys.exit("js_forge.py: %s" % l)
            elif l.startswith(b"PING"):
                self.s.sendall(b"PONG\r\n")

    def request(self, subject, body, timeout=5, msg_id=None):
        """The answer (bytes) or None; self.errors gets what the server refused."""
        self.sid += 1
        inbox = "_INBOX.forge.%d" % self.sid
        if msg_id:
            hdr = b"NATS/1.0\r\nNats-Msg-Id: %s\r\n\r\n" % msg_id.encode()
            pub = b"HPUB %s %s %d %d\r\n%s%s" % (subject.encode(), inbox.encode(), len(hdr),
                                                len(hdr) + len(body), hdr, body)
        else:
            pub = b"PUB %s %s %d\r\n%s" % (subject.encode(), inbox.encode(), len(body), body)
        self.s.sendall(b"SUB %s %d\r\n%s\r\nPING\r\n" % (inbox.encode(), self.sid, pub))
        self.s.settimeout(timeout)
        answer = None
        try:
            while True:
                l = self.line()
                if l.startswith(b"MSG ") or l.startswith(b"HMSG "):
                    n = int(l.split()[-1])
                    answer = self.f.read(n + 2)[:n]
                    break
                if l.startswith(b"-ERR"):
                    self.errors.append(l.decode(errors="replace").strip())
                    break
                if l.startswith(b"PING"):
                    self.s.sendall(b"PONG\r\n")
        except socket.timeout:
            pass
        self.s.settimeout(10)
        self.s.sendall(b"UNSUB %d\r\n" % self.sid)
        return answer

    def publish_with_id(self, subject, msg_id, body):
        hdr = b"NATS/1.0\r\nNats-Msg-Id: %s\r\n\r\n" % msg_id.encode()
        self.s.sendall(b"HPUB %s %d %d\r\n%s%s\r\n" % (
            subject.encode(), len(hdr), len(hdr) + len(body), hdr, body))

    def json(self, subject, obj):
        a = self.request(subject, json.dumps(obj).encode())
        return json.loads(a) if a else None


def newest_id(r, subjects):
    """The Nats-Msg-Id of the newest message on any of subjects, or None."""
    best = (0, None)
    for subj in subjects:
        a = r.json("$JS.API.STREAM.MSG.GET.MTRACE", {"last_by_subj": subj})
        if not a or "message" not in a:
            continue
        m = a["message"]
        hdrs = base64.b64decode(m.get("hdrs") or "").decode("utf-8", "replace")
        mid = re.search(r"^Nats-Msg-Id:\s*(\S+)\s*$", hdrs, re.M | re.I)
        if mid and m["seq"] > best[0]:
            best = (m["seq"], mid.group(1))
    return best[1]


def claim(port, reader, forger, subjects, own, stop):
    r, p = Nats(port, reader), Nats(port, forger)
    claimed, last = set(), None
    body = LOSS0
    while not os.path.exists(stop):
        mid = newest_id(r, subjects.split(","))
        if mid and mid != last:
            last = mid
            fields = mid.split("-")
            num = [i for i, x in enumerate(fields) if x.isdigit()]
            if num:
                i = num[-1]
                for k in range(1, AHEAD + 1):
                    fields2 = list(fields)
                    fields2[i] = str(int(fields[i]) + k)
                    fid = "-".join(fields2)
                    if fid not in claimed:
                        claimed.add(fid)
                        p.publish_with_id("mtrace.%s._.events" % own, fid, body)
                p.s.sendall(b"PING\r\n")
                p.wait_pong()
        time.sleep(0.02)
    print("claimed %d ids, last seen %s" % (len(claimed), last))


def main():
    port = sys.argv[1]
    if sys.argv[3] == "create":
        n = Nats(port, sys.argv[2])
        a = n.json("$JS.API.STREAM.CREATE.MTRACE", {
            "name": "MTRACE", "subjects": ["mtrace.>"], "retention": "limits",
            "storage": "file", "num_replicas": 1, "duplicate_window": 600 * 10**9})
        if not a or "error" in a:
            sys.exit("stream create: %s %s" % (a, n.errors))
    elif sys.argv[3] == "pub":
        n = Nats(port, sys.argv[2])
        a = n.request(sys.argv[4], LOSS0, msg_id=sys.argv[5])
        if not a or b"error" in a:
            sys.exit("publish: %s %s" % (a, n.errors))
        print(a.decode())
    elif sys.argv[3] == "try":
        n = Nats(port, sys.argv[2])
        a = n.request(sys.argv[4], b"{}", timeout=2)
        print("refused" if any("Permissions Violation" in e for e in n.errors)
              else "answered" if a is not None else "silent")
    elif sys.argv[4] == "claim":
        claim(port, sys.argv[2], sys.argv[3], sys.argv[5], sys.argv[6], sys.argv[7])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
