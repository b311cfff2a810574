#!/usr/bin/env python3
"""One recording, every outlet, the same figures (docs/figures.md).

  outlets_agree.py DOMID --stats CAT.jsonl --metrics METRICS.txt --chrome CHROME.json
                   --ctf CTF_DIR --page PAGE.json [--expect C,P,E,L]

For domain DOMID: created, pending, ended and labelled threads, and per label count,
current and live, as
  stats    mtraced's last Stats in mtrace-cat -f json (threads_total, live_threads,
           threads_ended, threads_labelled; labels' count, current, live)
  json     docs/figures.md's rules applied to the events of that same mtrace-cat -f json
  metrics  mtrace-exporter's /metrics
  chrome   mtrace-cat -f chrome: its thread slices, their ends, their label instants
  ctf      docs/figures.md's rules applied to the CTF trace as babeltrace2 reads it
  page     mtrace-web's page model (model.js figures(), tests/files/page-figures.js)
Every outlet must give stats' numbers; --expect also holds stats to known figures.
Exit 0 when they all agree, 1 (with a table of the differences) when not.
"""
import argparse
import collections
import json
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
import mtrace_ops  # noqa: E402  (the op table, common/ops.c)

# ops that see no thread (docs/figures.md): not events of a running thread
NOT_SEEN = {"gc", "ring_start", "site", "site_name", "module"}
ARG_SEEN = {"fulfills", "fails", "signal", "signal_new"}


class Rules:
    """docs/figures.md's rules, one domain."""

    def __init__(self):
        self.t = {}  # id -> {"over", "label", "ever"}
        self.created = self.ended = self.labelled = 0
        self.labels = collections.defaultdict(lambda: [0, 0, 0])  # count, current, live

    def seen(self, i):
        if i == -1:
            return None
        th = self.t.get(i)
        if th is None:
            th = self.t[i] = {"over": False, "label": None, "ever": set()}
            self.created += 1
        return th

    def over(self, th):
        if th["over"]:
            return
        th["over"] = True
        self.ended += 1
        if th["label"] is not None:
            self.labels[th["label"]][2] -= 1

    def label(self, th, name):
        if th["label"] == name:
            return
        if th["label"] is None:
            self.labelled += 1
        else:
            old = self.labels[th["label"]]
            old[1] -= 1
            if not th["over"]:
                old[2] -= 1
        th["label"] = name
        f = self.labels[name]
        f[1] += 1
        if not th["over"]:
            f[2] += 1
        if name not in th["ever"]:
            th["ever"].add(name)
            f[0] += 1

    def event(self, op, thread, arg, s):
        if op in NOT_SEEN:
            return
        th = self.seen(thread)
        if op == "creates":
            if arg == -1 or arg == thread:
                return
            old = self.t.pop(arg, None)
            if old is not None:
                self.over(old)
            self.seen(arg)
        elif op in ARG_SEEN:
            target = self.seen(arg)
            if op in ("fulfills", "fails") and target is not None:
                self.over(target)
        elif op == "label" and th is not None and s is not None:
            self.label(th, s)

    def figures(self):
        return {"created": self.created, "pending": self.created - self.ended,
                "ended": self.ended, "labelled": self.labelled,
                "labels": {k: tuple(v) for k, v in self.labels.items()}}


def from_stats(path, domid):
    last = None
    events = Rules()
    for line in open(path, encoding="utf-8"):
        d = json.loads(line)
        if d.get("type") == "event" and d["domid"] == domid:
            events.event(d["op"], d["thread"], d.get("arg", 0), d.get("str"))
        if d.get("type") == "stats" and any(x["domid"] == domid for x in d["domains"]):
            last = d
    if last is None:
        raise SystemExit("no stats of domain %d in %s" % (domid, path))
    ds = next(x for x in last["domains"] if x["domid"] == domid)
    labels = {x["label"]: (x["count"], x["current"], x["live"])
              for x in last.get("labels", []) if x["domid"] == domid}
    stats = {"created": ds["threads_total"], "pending": ds["live_threads"],
             "ended": ds["threads_ended"], "labelled": ds["threads_labelled"],
             "labels": labels, "evicted": ds["threads_evicted"]}
    return stats, events.figures()


SAMPLE = re.compile(r'^([a-z_]+)\{(.*)\} (\S+)$')
LABEL = re.compile(r'([a-z_]+)="((?:[^"\\]|\\.)*)"')


def unescape(v):
    return re.sub(r'\\(.)', lambda m: "\n" if m.group(1) == "n" else m.group(1), v)


def from_metrics(path, domid):
    dom, labels = {}, collections.defaultdict(lambda: [None, None, None])
    for line in open(path, encoding="utf-8"):
        m = SAMPLE.match(line.strip())
        if not m:
            continue
        name, lv, val = m.group(1), dict((k, unescape(v)) for k, v in LABEL.findall(m.group(2))), m.group(3)
        if lv.get("domid") != str(domid):
            continue
        v = int(float(val))
        dom[name] = v
        if "label" in lv:
            k = {"mtrace_label_threads_created_total": 0, "mtrace_label_threads_current": 1,
                 "mtrace_label_threads_live": 2}.get(name)
            if k is not None:
                labels[lv["label"]][k] = v
    if dom.get("mtrace_domain_labels_folded"):
        raise SystemExit("metrics: labels folded into other (raise --max-labels)")
    return {"created": dom.get("mtrace_domain_threads_created_total"),
            "pending": dom.get("mtrace_domain_threads_live"),
            "ended": dom.get("mtrace_domain_threads_ended_total"),
            "labelled": dom.get("mtrace_domain_threads_labelled_total"),
            "labels": {k: tuple(v) for k, v in labels.items()}}


def from_chrome(path, domid):
    """Thread slices: B of cat thread is a thread created; its E ended, unless it says
    did_not_end; a label instant belongs to the last thread slice begun on its track."""
    doc = json.load(open(path, encoding="utf-8"))
    cur = {}  # tid -> the thread (a dict) its track shows now
    threads = []
    for e in doc["traceEvents"]:
        if e.get("pid") != domid:
            continue
        ph, cat, tid = e.get("ph"), e.get("cat"), e.get("tid")
        if cat == "thread" and ph == "B":
            th = {"over": None, "label": None, "ever": set()}
            threads.append(th)
            cur[tid] = th
        elif cat == "thread" and ph == "E":
            cur[tid]["over"] = not (e.get("args") or {}).get("did_not_end", False)
        elif cat == "label" and ph in ("i", "I"):
            th = cur.get(tid)
            if th is None:
                continue  # the label of no thread (-1), on the scheduler's track
            th["label"] = e["args"]["label"]
            th["ever"].add(th["label"])
    labels = collections.defaultdict(lambda: [0, 0, 0])
    for th in threads:
        for name in th["ever"]:
            labels[name][0] += 1
        if th["label"] is not None:
            labels[th["label"]][1] += 1
            if not th["over"]:
                labels[th["label"]][2] += 1
    ended = sum(1 for th in threads if th["over"])
    return {"created": len(threads), "pending": len(threads) - ended, "ended": ended,
            "labelled": sum(1 for th in threads if th["label"] is not None),
            "labels": {k: tuple(v) for k, v in labels.items()}}


def from_ctf(path, domid):
    import bt2
    fields = {"read": "source", "signal": "source", "try_read": "source",
              "read_later": "source", "signal_new": "source", "fulfills": "resolvee",
              "fails": "resolvee", "becomes": "sleeper"}
    arg = {d["name"]: fields.get(d["name"], d["arg"])
           for d in mtrace_ops.EVENT_OPS.values() if d["arg"]}
    strs = {d["name"]: d["str"] for d in mtrace_ops.EVENT_OPS.values() if d["str"]}
    r = Rules()
    prefix = "dom%d-" % domid
    for m in bt2.TraceCollectionMessageIterator(path):
        if type(m) is not bt2._EventMessageConst:
            continue
        e = m.event
        if not os.path.basename(e.stream.name).startswith(prefix):
            continue
        ctx, p = e.specific_context_field, e.payload_field
        r.event(e.name, int(ctx["thread"]) if ctx is not None else -1,
                int(p[arg[e.name]]) if e.name in arg else 0,
                str(p[strs[e.name]]) if e.name in strs else None)
    return r.figures()


def from_page(path, domid):
    d = json.load(open(path, encoding="utf-8"))["domains"].get(str(domid))
    if d is None:
        raise SystemExit("page: no domain %d" % domid)
    d["labels"] = {k: (v["count"], v["current"], v["live"]) for k, v in d["labels"].items()}
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("domid", type=int)
    ap.add_argument("--stats", required=True)
    ap.add_argument("--metrics")
    ap.add_argument("--chrome")
    ap.add_argument("--ctf")
    ap.add_argument("--page")
    ap.add_argument("--expect")
    a = ap.parse_args()
    stats, by_rules = from_stats(a.stats, a.domid)
    outlets = {"json": by_rules}
    if a.metrics:
        outlets["metrics"] = from_metrics(a.metrics, a.domid)
    if a.chrome:
        outlets["chrome"] = from_chrome(a.chrome, a.domid)
    if a.ctf:
        outlets["ctf"] = from_ctf(a.ctf, a.domid)
    if a.page:
        outlets["page"] = from_page(a.page, a.domid)
    bad = []
    if stats["evicted"]:
        bad.append("stats: %d threads evicted: the figures cannot agree" % stats["evicted"])
    keys = ("created", "pending", "ended", "labelled")
    if a.expect:
        want = dict(zip(keys, map(int, a.expect.split(","))))
        for k in keys:
            if stats[k] != want[k]:
                bad.append("stats: %s %d, expected %d" % (k, stats[k], want[k]))
    if sum(v[1] for v in stats["labels"].values()) != stats["labelled"]:
        bad.append("stats: the labels' current do not sum to labelled")
    for name, o in outlets.items():
        for k in keys:
            if o.get(k) != stats[k]:
                bad.append("%s: %s %s, stats %s" % (name, k, o.get(k), stats[k]))
        for lab in sorted(set(o["labels"]) | set(stats["labels"])):
            if o["labels"].get(lab) != stats["labels"].get(lab):
                bad.append("%s: label %r (count, current, live) %s, stats %s" % (
                    name, lab, o["labels"].get(lab), stats["labels"].get(lab)))
    print("dom%d: created %d, pending %d, ended %d, labelled %d; %d labels (count %d, "
          "current %d, live %d); outlets %s" % (
              a.domid, stats["created"], stats["pending"], stats["ended"], stats["labelled"],
              len(stats["labels"]), sum(v[0] for v in stats["labels"].values()),
              sum(v[1] for v in stats["labels"].values()),
              sum(v[2] for v in stats["labels"].values()), " ".join(["stats"] + list(outlets))))
    for b in bad[:40]:
        print("DIFFERS " + b)
    if len(bad) > 40:
        print("... and %d more" % (len(bad) - 40))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
