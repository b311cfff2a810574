#!/usr/bin/env python3
"""promcheck.py - the exporter tests' side of Prometheus's HTTP API and of mtrace-cat.

  fetch URL OUT [ACCEPT]          GET URL into OUT (Content-Type into OUT.ctype)
  wait-up PROM SECS               until up{job="mtrace"} is 1
  quiesce CAT SOCK OUT SECS       mtrace-cat statistics, until two in a row are equal
  wait-scraped PROM SINCE SECS    until Prometheus holds a scrape newer than SINCE (unix s)
  compare PROM CAT_JSON LABELS COUNTERS
                                  every value of the exporter as Prometheus stored it
                                  equals mtrace-cat's statistics (events, by op too, lost,
                                  corrupt, threads, labels, counters), caps and folds included
  wait-alert PROM NAME STATE SECS [label=value...]
  wait-gone PROM DOMAIN SECS      until no series of domain DOMAIN is left
  scrape-health PROM              Prometheus took every sample of every scrape
  clocks PROM CAT SOCK SECS       every live domain's clock maps in force, as mtraced tells
                                  mtrace-cat at subscribe, are Prometheus's
                                  mtrace_clock_offset_seconds, _uncertainty_seconds and
                                  _maps_total series (clock and source labels), no more
"""
import json
import subprocess
import sys
import time
import urllib.parse
import urllib.request


def die(msg):
    print("promcheck: " + msg, file=sys.stderr)
    sys.exit(1)


def get(url, accept=None):
    req = urllib.request.Request(url)
    if accept:
        req.add_header("Accept", accept)
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.read(), r.headers.get("Content-Type", "")


def query(prom, expr):
    body, _ = get(prom + "/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    doc = json.loads(body)
    if doc.get("status") != "success":
        die("query %s: %s" % (expr, doc))
    return doc["data"]["result"]


def series(prom, expr):
    """{frozenset(labels without __name__): float value}"""
    out = {}
    for r in query(prom, expr):
        m = dict(r["metric"])
        m.pop("__name__", None)
        key = frozenset(m.items())
        if key in out:
            die("two series with the same labels: %s" % m)
        out[key] = float(r["value"][1])
    return out


def poll(secs, fn, what):
    end = time.time() + secs
    while True:
        try:
            v = fn()
        except OSError:
            v = None
        if v:
            return v
        if time.time() > end:
            die("timed out waiting for " + what)
        time.sleep(0.25)


def cat_stats(cat, sock):
    out = subprocess.run([cat, "-s", sock, "-f", "json", "--no-events", "--stats", "100",
                          "--label-stats", "-n", "1"], capture_output=True, check=True).stdout
    # pairs, not dicts: counter names the daemon made equal must not merge here
    raw = out.decode().splitlines()[-1]
    return raw, json.loads(raw, object_pairs_hook=lambda p: p)


def as_dict(pairs):
    return {k: v for k, v in pairs}


def oracle(stats, cap_labels, cap_counters):
    """What the exporter must show: (domain facts, label series, counter series)."""
    stats = as_dict(stats)
    doms, labels, counters = {}, {}, {}
    for dp in stats["domains"]:
        d = as_dict(dp)
        if not d["alive"]:
            continue
        key = (d["name"], str(d["domid"]))
        doms[key] = d
        shown, fold = {}, [0, 0]
        for c in d["counters"]:  # [{"name", "value"}] (docs/json.md)
            c = as_dict(c)
            name, value = c["name"], c["value"]
            if len(shown) < cap_counters and name != "other" and name not in shown:
                shown[name] = value
            else:
                fold[0] += 1
                fold[1] += value
        if fold[0]:
            shown["other"] = fold[1]
        counters[key] = (shown, fold[0])
    per = {}
    for lp in stats["labels"]:
        l = as_dict(lp)
        for key in doms:
            if key[1] == str(l["domid"]):
                per.setdefault(key, []).append(l)
    for key in doms:
        shown, fold = {}, [0, 0, 0]
        for l in per.get(key, []):
            name = l["label"]
            if len(shown) < cap_labels and name != "other" and name not in shown:
                shown[name] = (l["count"], l["live"])
            else:
                fold[0] += 1
                fold[1] += l["count"]
                fold[2] += l["live"]
        if fold[0]:
            shown["other"] = (fold[1], fold[2])
        labels[key] = (shown, fold[0])
    return doms, labels, counters


def by_domain(s, extra=None):
    out = {}
    for k, v in s.items():
        m = dict(k)
        dk = (m.pop("domain"), m.pop("domid"))
        sub = m.pop(extra) if extra else None
        if m:
            die("unexpected labels %s" % m)
        if extra:
            out.setdefault(dk, {})[sub] = v
        else:
            out[dk] = v
    return out


def compare(prom, cat_json, cap_labels, cap_counters):
    with open(cat_json) as f:
        stats = json.loads(f.read(), object_pairs_hook=lambda p: p)
    doms, labels, counters = oracle(stats, cap_labels, cap_counters)
    sel = '{job="mtrace"}'
    strip = lambda s: {frozenset((k, v) for k, v in key if k not in ("job", "instance")): val
                       for key, val in s.items()}
    events = by_domain(strip(series(prom, "sum without (op) (mtrace_domain_events_total%s)" % sel)))
    by_op = by_domain(strip(series(prom, "mtrace_domain_events_total" + sel)), "op")
    bad = []
    if set(events) != set(doms):
        bad.append("domains: prometheus %s, mtrace-cat %s" % (sorted(events), sorted(doms)))
    facts = [("mtrace_domain_lost_events_total", "lost"),
             ("mtrace_domain_corrupt_records_total", "corrupt"),
             ("mtrace_domain_unknown_records_total", "unknown"),
             ("mtrace_domain_threads_live", "live_threads"),
             ("mtrace_domain_threads_created_total", "threads_total"),
             ("mtrace_domain_threads_ended_total", "threads_ended"),
             ("mtrace_domain_threads_labelled_total", "threads_labelled"),
             ("mtrace_domain_wakeups_total", "wakeups")]
    got = {m: by_domain(strip(series(prom, m + sel))) for m, _ in facts}
    created = by_domain(strip(series(prom, "mtrace_label_threads_created_total" + sel)), "label")
    live = by_domain(strip(series(prom, "mtrace_label_threads_live" + sel)), "label")
    lfold = by_domain(strip(series(prom, "mtrace_domain_labels_folded" + sel)))
    ctr = by_domain(strip(series(prom, "mtrace_guest_value" + sel)), "counter")
    cfold = by_domain(strip(series(prom, "mtrace_domain_counters_folded" + sel)))
    nlabels = 0
    for key, d in doms.items():
        if events.get(key) != d["events"]:
            bad.append("%s events: prometheus %s, mtrace-cat %s" % (key, events.get(key), d["events"]))
        want_ops = {k: v for k, v in d["op_events"]}
        if by_op.get(key) != want_ops:
            bad.append("%s events by op: prometheus %s, mtrace-cat %s" % (key, by_op.get(key), want_ops))
        if sum(want_ops.values()) != d["events"]:
            bad.append("%s: mtrace-cat's events by op do not add up to its events" % (key,))
        for m, field in facts:
            if got[m].get(key) != d[field]:
                bad.append("%s %s: prometheus %s, mtrace-cat %s" % (key, m, got[m].get(key), d[field]))
        shown, nfold = labels[key]
        nlabels += len(shown)
        want_c = {k: v[0] for k, v in shown.items()}
        want_l = {k: v[1] for k, v in shown.items()}
        if created.get(key, {}) != want_c:
            diff = set(created.get(key, {}).items()) ^ set(want_c.items())
            bad.append("%s label counts differ: %s" % (key, sorted(diff, key=repr)[:10]))
        if live.get(key, {}) != want_l:
            bad.append("%s label live counts differ" % (key,))
        if lfold.get(key) != nfold:
            bad.append("%s labels folded: prometheus %s, expected %s" % (key, lfold.get(key), nfold))
        shown, nfold = counters[key]
        if ctr.get(key, {}) != shown:
            diff = set(ctr.get(key, {}).items()) ^ set(shown.items())
            bad.append("%s counters differ: %s" % (key, sorted(diff, key=repr)[:10]))
        if cfold.get(key) != nfold:
            bad.append("%s counters folded: prometheus %s, expected %s" % (key, cfold.get(key), nfold))
    if bad:
        die("Prometheus and mtrace-cat differ:\n  " + "\n  ".join(bad))
    print("equal: %d domains, %d label series, %d events" %
          (len(doms), nlabels, sum(d["events"] for d in doms.values())))


CLOCKS = {1: "monotonic", 2: "xen", 3: "realtime"}


def clocks(prom, cat, sock, secs):
    """The clock maps mtraced tells a new subscriber (before its first statistics),
    held to what Prometheus scraped from the exporter."""
    out = subprocess.run([cat, "-s", sock, "-f", "json", "--no-events", "--stats", "100",
                          "-n", "1"], capture_output=True, check=True).stdout.decode()
    maps, names = {}, {}
    for line in out.splitlines():
        m = json.loads(line)
        if m["type"] == "clock_map":
            maps[(m["domid"], m["clock"])] = m
        elif m["type"] == "stats":
            names = {d["domid"]: d["name"] for d in m["domains"] if d["alive"]}
    want = {"offset": {}, "uncertainty": {}, "maps": {}}
    for (domid, clock), m in maps.items():
        if domid not in names:
            continue
        key = frozenset({"domain": names[domid], "domid": str(domid), "clock": CLOCKS[clock],
                         "source": m["source"], "job": "mtrace",
                         "instance": None}.items())
        known = m["source"] != "unknown"
        if known:
            want["offset"][key] = m["offset_ns"] / 1e9
        want["uncertainty"][key] = m["uncertainty_ns"] / 1e9 if known else float("inf")
        want["maps"][key] = float(m["seq"])
    if not want["maps"] or set(d for d, _ in maps) < set(names):
        die("mtraced told clock maps of %s, the live domains are %s" % (sorted(maps), names))
    last = [None]

    def same():
        got = {}
        for k, metric in (("offset", "mtrace_clock_offset_seconds"),
                          ("uncertainty", "mtrace_clock_uncertainty_seconds"),
                          ("maps", "mtrace_clock_maps_total")):
            got[k] = {frozenset((a, None if a == "instance" else b) for a, b in s): v
                      for s, v in series(prom, metric + '{job="mtrace"}').items()}
        last[0] = got
        for k in want:
            if set(got[k]) != set(want[k]):
                return False
            for s, v in want[k].items():
                g = got[k][s]
                # Prometheus keeps a float64: 1.7e9 s to about 0.2 us
                if not (g == v or abs(g - v) <= 1e-6 + abs(v) * 1e-15):
                    return False
        return True
    try:
        poll(secs, same, "Prometheus to hold mtraced's clock maps")
    except SystemExit:
        print("want %s\ngot  %s" % (want, last[0]), file=sys.stderr)
        raise
    for s, v in sorted(want["uncertainty"].items(), key=str):
        d = dict(s)
        print("clock: %s %s %s: offset %s s, uncertainty %s s" % (
            d["domain"], d["clock"], d["source"], want["offset"].get(s, "-"), v))


def main(argv):
    cmd = argv[1]
    if cmd == "fetch":
        body, ctype = get(argv[2], argv[4] if len(argv) > 4 and argv[4] else None)
        with open(argv[3], "wb") as f:
            f.write(body)
        with open(argv[3] + ".ctype", "w") as f:
            f.write(ctype + "\n")
    elif cmd == "wait-up":
        poll(float(argv[3]), lambda: any(v == 1 for v in series(argv[2], 'up{job="mtrace"}').values()),
             "Prometheus to scrape the exporter")
    elif cmd == "quiesce":
        cat, sock, out, secs = argv[2], argv[3], argv[4], float(argv[5])
        prev = [None]

        def same():
            raw, s = cat_stats(cat, sock)
            s = as_dict(s)
            # what the comparison reads (rates move on after the last event)
            key = json.dumps([(as_dict(d)["domid"], as_dict(d)["events"], as_dict(d)["lost"],
                               as_dict(d)["live_threads"], as_dict(d)["counters"])
                              for d in s["domains"]] +
                             [[(as_dict(l)["domid"], as_dict(l)["label"], as_dict(l)["count"],
                                as_dict(l)["live"]) for l in s["labels"]]])
            ok = key == prev[0]
            prev[0] = key
            if ok:
                with open(out, "w") as f:
                    f.write(raw)
            else:
                time.sleep(0.3)
            return ok
        poll(secs, same, "statistics to stop changing")
    elif cmd == "wait-scraped":
        since = float(argv[3])
        poll(float(argv[4]), lambda: any(float(r["value"][1]) > since for r in
                                         query(argv[2], 'timestamp(mtrace_up{job="mtrace"})')),
             "a scrape after %s" % since)
    elif cmd == "compare":
        compare(argv[2], argv[3], int(argv[4]), int(argv[5]))
    elif cmd == "wait-alert":
        prom, name, state, secs = argv[2], argv[3], argv[4], float(argv[5])
        want = dict(a.split("=", 1) for a in argv[6:])

        def found():
            body, _ = get(prom + "/api/v1/alerts")
            for a in json.loads(body)["data"]["alerts"]:
                if a["labels"].get("alertname") == name and a["state"] == state and \
                        all(a["labels"].get(k) == v for k, v in want.items()):
                    return a
            return None
        a = poll(secs, found, "alert %s %s %s" % (name, state, want))
        print("alert %s %s: %s" % (name, state, a["annotations"].get("summary", "")))
    elif cmd == "wait-gone":
        prom, dom = argv[2], argv[3]
        # what was scraped (recorded rules keep a rate over the last minute)
        expr = '{__name__=~"mtrace_.*",job="mtrace",domain=%s}' % json.dumps(dom)
        poll(float(argv[4]), lambda: not query(prom, expr), "domain %s to disappear" % dom)
    elif cmd == "clocks":
        clocks(argv[2], argv[3], argv[4], float(argv[5]))
    elif cmd == "scrape-health":
        prom = argv[2]
        checks = ["prometheus_target_scrapes_sample_duplicate_timestamp_total",
                  "prometheus_target_scrapes_sample_out_of_bounds_total",
                  "prometheus_target_scrapes_exceeded_sample_limit_total",
                  "prometheus_target_scrape_pool_exceeded_label_limits_total"]
        for m in checks:
            for r in query(prom, m):
                if float(r["value"][1]) != 0:
                    die("%s is %s" % (m, r["value"][1]))
        for r in query(prom, 'up{job="mtrace"}'):
            if float(r["value"][1]) != 1:
                die("the last scrape failed")
        print("scrapes: %s samples in the last" % query(prom, 'scrape_samples_scraped{job="mtrace"}')[0]["value"][1])
    else:
        die("unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv)
