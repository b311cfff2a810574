#!/usr/bin/env python3
"""jsz.py WHAT MONPORT...: a three-node cluster as its nodes' HTTP monitors (/jsz) see it.

  meta     the JetStream metadata leader, once every node that answers names the same
  meta-all the same, once every node given answers (a cluster just started)
  leader   the leader of the stream MTRACE, with its replicas: "LEADER N_REPLICAS CURRENT"
           (CURRENT: how many of the followers are current), once a node knows it
Exits 1 (nothing printed) while the nodes disagree or do not know yet."""
import json, sys, urllib.request


def jsz(port, query):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%s/jsz?%s" % (port, query),
                                    timeout=2) as r:
            return json.load(r)
    except (OSError, ValueError):
        return None


what, ports = sys.argv[1], sys.argv[2:]
if what in ("meta", "meta-all"):
    seen, answered = set(), 0
    for p in ports:
        d = jsz(p, "")
        if d is not None:
            answered += 1
            seen.add((d.get("meta_cluster") or {}).get("leader") or "")
    if len(seen) != 1 or "" in seen or (what == "meta-all" and answered != len(ports)):
        sys.exit(1)
    print(seen.pop())
elif what == "leader":
    for p in ports:
        d = jsz(p, "streams=true")
        for acc in (d or {}).get("account_details") or []:
            for st in acc.get("stream_detail") or []:
                cl = st.get("cluster") or {}
                if st.get("name") == "MTRACE" and cl.get("leader"):
                    reps = cl.get("replicas") or []
                    print(cl["leader"], 1 + len(reps), sum(1 for r in reps if r.get("current")))
                    sys.exit(0)
    sys.exit(1)
else:
    sys.exit("jsz.py: meta, meta-all or leader")
