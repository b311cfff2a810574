#!/usr/bin/env python3
"""metric.py FILE NAME: the value of the unlabelled sample NAME in a Prometheus text
exposition (mtrace-ship's /metrics as scraped); exits 1 when it is missing.
metric.py --prom URL EXPR: the value Prometheus at URL has for EXPR (one series)."""
import json, sys, urllib.parse, urllib.request

if sys.argv[1] == "--prom":
    q = urllib.parse.urlencode({"query": sys.argv[3]})
    with urllib.request.urlopen(sys.argv[2] + "/api/v1/query?" + q, timeout=10) as r:
        res = json.load(r)["data"]["result"]
    if len(res) != 1:
        sys.exit(1)
    print(res[0]["value"][1])
    sys.exit(0)
for line in open(sys.argv[1], encoding="utf-8"):
    parts = line.split()
    if len(parts) == 2 and parts[0] == sys.argv[2]:
        print(parts[1])
        sys.exit(0)
sys.exit(1)
