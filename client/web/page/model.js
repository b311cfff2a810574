// model.js - what the page knows: per domain, threads with their rows, arrows,
// running intervals, event-channel marks, GC intervals and counters, built from the
// /events feed.  A domain is (host, domid): with mtrace-web --nats the feed carries
// many hosts, and two of them may both have a domain 5; from mtraced's socket there
// is one host, '' (the messages name none).  Bounded: a time span and an event cap (both settable) decide what is
// kept, so a tab left open for a day keeps its memory bounded.
//
// Times are milliseconds on one axis, the host timeline (each host's dom0
// CLOCK_REALTIME, ms since the epoch): a batch that says where its guest clock lies on
// it (ho, from mtraced's ClockMap through mtrace-web) is drawn at guest + ho, exactly,
// whatever the guest's clock.  A domain whose clock is not on it (no ho: an unknown
// map, an older mtraced) is anchored instead to the time mtrace-web received its first
// batch (re-anchored if they drift far apart) and marked not aligned.  A fleet's hosts
// each have their own timeline: the model keeps it, and the page draws a host's events
// shifted by its clock's measured skew against NATS (fleetT) onto one fleet axis.
'use strict';

const OP = {
  CREATES: 0, READ: 1, FULFILLS: 2, FAILS: 3, BECOMES: 4, LABEL: 5, INCREASE: 6,
  SWITCH: 7, GC: 8, SIGNAL: 9, TRY_READ: 10, COUNTER: 11, READ_LATER: 12,
  SIGNAL_NEW: 13, EVTCHN_SEND: 64, EVTCHN_RECV: 65, RING_START: 66,
};
const DRIFT_MS = 2000;	// re-anchor a domain's clock beyond this

// A min-heap of numbers in an array.
function heapPush(h, v) {
  let i = h.length;
  h.push(v);
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (h[p] <= v) break;
    h[i] = h[p]; i = p;
  }
  h[i] = v;
}
function heapPop(h) {
  const top = h[0], v = h.pop();
  if (h.length) {
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= h.length) break;
      if (c + 1 < h.length && h[c + 1] < h[c]) c++;
      if (h[c] >= v) break;
      h[i] = h[c]; i = c;
    }
    h[i] = v;
  }
  return top;
}

// A thread's current row; for no thread (id -1: null), the other end's.
const cur = (th, other) => th ? th.segs[th.segs.length - 1].row : other ? cur(other) : 0;

// A domain's key in the maps: unambiguous whatever bytes a host name holds.
const domKey = (host, domid) => JSON.stringify([host, domid]);

class Domain {
  constructor(host, domid) {
    this.host = host;
    this.domid = domid;
    this.key = domKey(host, domid);
    this.name = '';
    this.alive = true;
    this.reason = '';
    this.rings = 0;
    this.origin = null;	// BigInt ns: the first base_ts seen
    this.offset = 0;	// wall ms = rel ms + offset
    this.aligned = null;	// on the host timeline (true), anchored (false), not known yet
    this.clock = null;	// its last clock_map: {source, offset_ns, uncertainty_ns, seq}
    this.threads = new Map();
    this.order = [];	// threads in creation order
    this.rowFree = [];	// per row: the time it is free again (Infinity: taken)
    this.freeRows = [];	// rows freed, a min-heap (see Model.takeRow)
    this.rowSegs = [];	// per row: the line stretches drawn on it, in time order
    this.creates = []; this.reads = []; this.resolves = []; this.signals = [];
    this.becomes = []; this.labels = []; this.sends = []; this.recvs = []; this.joins = [];
    this.fulfills = []; this.fails = [];
    this.gcs = [];
    this.runs = [];	// closed running intervals {th, t0, t1}
    this.running = new Map();	// ring -> {th, t0}
    this.counters = new Map();	// name -> {value, points: [[t, v]]}
    this.lastPort = new Map();	// port -> last send {th, t}
    this.events = 0;
    this.lastT = -Infinity;
    this.stats = null;
    this.vcpus = new Map();	// vCPU -> its intervals {t0, t1, state, run, steal, blocked, pcpu}
    this.vcpuUnmapped = 0;	// vCPU intervals not drawn: no mapping of the domain's clock
    // The figures of docs/figures.md, counted as events arrive (pruning forgets
    // threads, not these): created, ended, labelled; per label count/current/live.
    this.fig = { created: 0, ended: 0, labelled: 0, labels: new Map() };
  }
}

class Model {
  constructor() {
    this.domains = new Map();	// domKey(host, domid) -> Domain
    this.hosts = new Map();	// host -> {host, daemon, up}: its mtraced, as the feed said
    this.spanMs = 10 * 60 * 1000;
    this.maxEvents = 500000;
    this.stored = 0;
    this.received = 0;	// events applied since the model was last reset
    this.batches = 0;
    this.version = 0;	// bumped at every change (the renderer redraws)
    this.latest = -Infinity;	// latest event time, wall ms
    this.dropped = 0;	// events mtrace-web dropped for this browser (it told us)
    this.upstreamDropped = 0;	// events mtraced dropped for mtrace-web
    this.lostInRing = 0;
    this.typeNames = [];	// thread types by number: mtrace-web's hello says
    this.fleetFeed = false;	// mtrace-web --nats: its hello says
    this.hostOrigin = null;	// BigInt ns on the host timeline: the first batch placed on it
    this.hostOriginMs = 0;	// the same, ms
    this.pairs = [];	// event-channel pairs across domains (pairs.js)
  }

  reset() {
    const keep = { spanMs: this.spanMs, maxEvents: this.maxEvents, typeNames: this.typeNames,
      fleetFeed: this.fleetFeed };
    Object.assign(this, new Model(), keep);
    this.version++;
  }

  host(host) {
    let h = this.hosts.get(host);
    if (!h) {
      h = { host, daemon: '', up: null, skew: null };	// skew: its last host_skew
      this.hosts.set(host, h);
    }
    return h;
  }

  dom(host, domid) {
    const key = domKey(host, domid);
    let d = this.domains.get(key);
    if (!d) {
      this.host(host);
      d = new Domain(host, domid);
      this.domains.set(key, d);
    }
    return d;
  }

  // The domain, if known (without making one).
  domain(host, domid) {
    return this.domains.get(domKey(host, domid));
  }

  // A fleet: the feed is mtrace-web --nats, or more than the one local host.
  fleet() {
    return this.fleetFeed || this.hosts.size > 1 || (this.hosts.size === 1 && !this.hosts.has(''));
  }

  // Domains in the order drawn and listed: by host, then domid.
  sortedDomains() {
    return [...this.domains.values()].sort((a, b) =>
      a.host < b.host ? -1 : a.host > b.host ? 1 : a.domid - b.domid);
  }

  // Events received of a host's domains.
  hostEvents(host) {
    let n = 0;
    for (const d of this.domains.values()) if (d.host === host) n += d.events;
    return n;
  }

  domainUp(u) {
    const d = this.dom(u.host || '', u.domid);
    d.name = u.name; d.alive = true; d.reason = ''; d.rings = u.rings;
    this.version++;
  }

  domainDown(u) {
    const d = this.dom(u.host || '', u.domid);
    d.alive = false; d.reason = u.reason;
    // Whatever was running stops with the domain.
    for (const r of d.running.values()) d.runs.push({ th: r.th, t0: r.t0, t1: d.lastT, row: r.row });
    d.running.clear();
    this.version++;
  }

  // A domain's vCPU runstate intervals (issue 38, docs/json.md "vcpu"): host times, on
  // the page's one axis with every domain on the host timeline.  A domain whose clock is
  // not on it (its threads anchored to receipt) has them counted, not drawn as if
  // aligned.
  vcpu(v) {
    const d = this.dom(v.host || '', v.domid);
    if (d.aligned === false || !v.intervals.length) {
      d.vcpuUnmapped += v.intervals.length;
      this.version++;
      return;
    }
    if (this.hostOrigin === null) {
      const base = BigInt(v.intervals[0].start_ns);
      this.hostOrigin = base;
      this.hostOriginMs = Number(base / 1000000n) + Number(base % 1000000n) / 1e6;
    }
    const at = ns => this.hostOriginMs + Number(BigInt(ns) - this.hostOrigin) / 1e6;
    for (const iv of v.intervals) {
      if (!(iv.dur_ns > 0)) continue;
      let band = d.vcpus.get(iv.vcpu);
      if (!band) { band = []; d.vcpus.set(iv.vcpu, band); }
      const t0 = at(iv.start_ns);
      band.push({ t0, t1: t0 + iv.dur_ns / 1e6, state: iv.state, pcpu: iv.pcpu,
        run: iv.running_ns / iv.dur_ns, steal: iv.runnable_ns / iv.dur_ns,
        blocked: iv.blocked_ns / iv.dur_ns });
    }
    this.version++;
  }

  // The thread an id names, drawn from its first mention; null for -1 (no thread).
  // seen: the event makes it a thread of docs/figures.md (counted as created); the
  // source of a read and the target of becomes only give an arrow somewhere to go.
  thread(d, id, t, seen = true) {
    if (id === -1) return null;
    let th = d.threads.get(id);
    if (!th) {
      th = {
        id, dom: d, label: '', type: 'Unknown', parent: -1, created: t, end: null,
        failed: false, exn: '', reads: 0, resolves: 0, children: 0, running: 0,
        segs: [], becomes: -1, explicit: false,
        counted: false, resolved: null, over: false, labelled: false, ever: null,
      };
      this.addSeg(d, th, this.takeRow(d, t), t);
      d.threads.set(id, th);
      d.order.push(th);
    }
    if (seen && !th.counted) { th.counted = true; d.fig.created++; }
    return th;
  }

  labelFig(d, name) {
    let f = d.fig.labels.get(name);
    if (!f) { f = { count: 0, current: 0, live: 0 }; d.fig.labels.set(name, f); }
    return f;
  }

  // The thread is no longer pending (resolved, or its id created again).
  over(d, th) {
    if (!th.counted || th.over) return;
    th.over = true;
    d.fig.ended++;
    if (th.labelled) this.labelFig(d, th.label).live--;
  }

  setLabel(d, th, name) {
    if (th.labelled && th.label === name) return;
    if (th.labelled) {
      const old = this.labelFig(d, th.label);
      old.current--;
      if (!th.over) old.live--;
    } else {
      th.labelled = true;
      d.fig.labelled++;
      th.ever = new Set();
    }
    th.label = name;
    const f = this.labelFig(d, name);
    f.current++;
    if (!th.over) f.live++;
    if (!th.ever.has(name)) { th.ever.add(name); f.count++; }
  }

  // Per domain of host (by domid), the figures of docs/figures.md, as mtraced's Stats
  // give them.
  figures(host = '') {
    const out = {};
    for (const d of this.domains.values()) {
      if (d.host !== host) continue;
      const f = d.fig, labels = {};
      for (const [k, v] of f.labels) labels[k] = { ...v };
      out[d.domid] = {
        created: f.created, ended: f.ended, pending: f.created - f.ended,
        labelled: f.labelled, labels,
      };
    }
    return out;
  }

  // A stretch of a thread's line on one row; each row keeps its stretches in time
  // order, so that drawing visits the visible rows only.
  addSeg(d, th, row, t) {
    const seg = { row, t0: t, th };
    th.segs.push(seg);
    while (d.rowSegs.length <= row) d.rowSegs.push([]);
    d.rowSegs[row].push(seg);
  }

  // The lowest row free by t.  Rows freed wait in a min-heap (d.freeRows, entries
  // made stale by a later take are skipped): a scan of every row per thread created
  // costs a frame's worth with thousands of rows.  Only a row freed after t (events of
  // several rings slightly out of order) needs the scan.
  takeRow(d, t) {
    const h = d.freeRows;
    while (h.length && d.rowFree[h[0]] === Infinity) heapPop(h);
    let r = -1;
    if (h.length && d.rowFree[h[0]] <= t) r = heapPop(h);
    else if (h.length) {
      for (let i = 0; i < d.rowFree.length; i++) if (d.rowFree[i] <= t) { r = i; break; }
    }
    if (r < 0) { d.rowFree.push(Infinity); return d.rowFree.length - 1; }
    d.rowFree[r] = Infinity;
    return r;
  }

  freeRow(d, row, t) {
    d.rowFree[row] = t;
    heapPush(d.freeRows, row);
    if (d.freeRows.length > 2 * d.rowFree.length + 64) {	// stale entries: rebuilt
      d.freeRows = [];
      for (let r = 0; r < d.rowFree.length; r++) if (d.rowFree[r] !== Infinity) heapPush(d.freeRows, r);
    }
  }

  endThread(d, th, t) {
    if (th.end !== null) return;
    th.end = t;
    this.freeRow(d, th.segs[th.segs.length - 1].row, t);
  }

  // A fleet host's clock against the NATS server's (SSE event skew, docs/fleet.md).
  hostSkew(m) {
    this.host(m.host).skew = { skew_ns: m.skew_ns, spread_ns: m.spread_ns, samples: m.samples };
    this.version++;
  }

  // How far a domain's times are moved onto the fleet axis (ms): its host's skew, for
  // a domain on its host's timeline (one placed by arrival is on NATS's time already).
  shiftMs(d) {
    const h = d.aligned === false ? null : this.hosts.get(d.host);
    return h && h.skew ? h.skew.skew_ns / 1e6 : 0;
  }

  fleetT(d, t) { return t - this.shiftMs(d); }

  // A domain's clock map, as mtraced sent it (SSE event clock).
  clockMap(m) {
    const d = this.dom(m.host || '', m.domid);
    d.clock = { source: m.source, offset_ns: m.offset_ns, uncertainty_ns: m.uncertainty_ns,
      seq: m.seq };
    this.version++;
  }

  // One batch from the feed (the server's column form of an EventBatch).
  batch(b) {
    const d = this.dom(b.host || '', b.d);
    const n = b.op.length;
    if (b.ho !== undefined) { this.hostBatch(d, b); return; }
    d.aligned = false;
    if (d.origin === null) d.origin = BigInt(b.t);
    let rel = Number(BigInt(b.t) - d.origin) / 1e6;
    let sum = 0;
    for (let i = 0; i < n; i++) sum += b.dt[i];
    // Anchor: the batch's last event happened about when mtrace-web got it.
    const lastRel = rel + sum / 1e6;
    if (d.events === 0 || Math.abs(lastRel + d.offset - b.w) > DRIFT_MS) d.offset = b.w - lastRel;
    let t = rel + d.offset;
    for (let i = 0; i < n; i++) {
      t += b.dt[i] / 1e6;
      const si = b.si[i];
      this.event(d, b.r, t, b.op[i], b.th[i], b.a[i], b.ty ? b.ty[i] : 0,
        si >= 0 ? b.s[si] : null);
    }
    d.events += n;
    this.received += n;
    this.stored += n;
    this.batches++;
    if (t > this.latest) this.latest = t;
    if (t > d.lastT) d.lastT = t;
    this.version++;
  }

  // A batch on the host timeline: ns relative to the page's origin are exact integers
  // in a double (for 104 days), so each event is one rounding from its true time.
  hostBatch(d, b) {
    const n = b.op.length;
    const base = BigInt(b.t) + BigInt(b.ho);
    if (this.hostOrigin === null) {
      this.hostOrigin = base;
      this.hostOriginMs = Number(base / 1000000n) + Number(base % 1000000n) / 1e6;
    }
    d.aligned = true;
    let rel = Number(base - this.hostOrigin), t = this.hostOriginMs + rel / 1e6;
    for (let i = 0; i < n; i++) {
      rel += b.dt[i];
      t = this.hostOriginMs + rel / 1e6;
      const si = b.si[i];
      this.event(d, b.r, t, b.op[i], b.th[i], b.a[i], b.ty ? b.ty[i] : 0,
        si >= 0 ? b.s[si] : null);
    }
    d.events += n;
    this.received += n;
    this.stored += n;
    this.batches++;
    if (t > this.latest) this.latest = t;
    if (t > d.lastT) d.lastT = t;
    this.version++;
  }

  event(d, ring, t, op, tid, arg, type, str) {
    switch (op) {
    case OP.CREATES: {
      const parent = this.thread(d, tid, t);
      if (arg === -1 || arg === tid) break;	// no child; a thread cannot create itself
      let child = d.threads.get(arg);
      // A known id created again is a new thread (the old one, if pending, is over); an
      // id only mentioned before (a read's source) is this thread.
      if (child && child.counted) {
        this.over(d, child);
        if (child.end === null) this.endThread(d, child, t);
        d.threads.delete(arg);
        child = null;
      }
      child = this.thread(d, arg, t);
      child.parent = tid; child.explicit = true;
      child.type = this.typeNames[type] || 'Unknown';
      if (parent) parent.children++;
      d.creates.push({ t, from: tid, to: arg, ra: cur(parent, child), rb: cur(child) });
      break;
    }
    case OP.READ: case OP.READ_LATER: case OP.TRY_READ: {
      const reader = this.thread(d, tid, t);
      const src = this.thread(d, arg, t, false);
      if (reader && op !== OP.TRY_READ) reader.reads++;
      if (!src) break;
      // From where the source resolved, if it had by then.
      const ts = src.end !== null && src.end <= t ? src.end : t;
      d.reads.push({ t, from: arg, to: tid, op, ts, ra: cur(src), rb: cur(reader, src) });
      break;
    }
    case OP.FULFILLS: case OP.FAILS: {
      const by = this.thread(d, tid, t);
      const target = this.thread(d, arg, t);
      if (by) by.resolves++;
      if (!target) break;
      if (!target.over) {
        if (op === OP.FAILS) { target.failed = true; target.exn = str || ''; }
        target.resolved = t;
        this.over(d, target);
      }
      this.endThread(d, target, t);
      const r = { t, from: tid, to: arg, failed: op === OP.FAILS, exn: str || '', ra: cur(by, target), rb: cur(target) };
      d.resolves.push(r);
      (op === OP.FAILS ? d.fails : d.fulfills).push(r);
      break;
    }
    case OP.BECOMES: {
      const a = this.thread(d, tid, t);
      const b = this.thread(d, arg, t, false);
      if (!a || !b) break;
      // A chain continues on one row: b moves to a's row from now on.  a's line ends
      // there, but a does not end: becoming another resolves neither thread.
      const aRow = a.segs[a.segs.length - 1].row;
      a.becomes = arg;
      if (a.end === null) a.end = t;
      if (b.end === null) {
        const bRow = b.segs[b.segs.length - 1].row;
        if (bRow !== aRow) {
          this.freeRow(d, bRow, t);
          this.addSeg(d, b, aRow, t);
          d.rowFree[aRow] = Infinity;
        }
      } else {
        this.freeRow(d, aRow, t);
      }
      d.becomes.push({ t, from: tid, to: arg, ra: aRow, rb: cur(b) });
      break;
    }
    case OP.LABEL: {
      const th = this.thread(d, tid, t);
      if (!th || str === null) break;
      this.setLabel(d, th, str);
      d.labels.push({ t, th: tid, label: th.label });
      break;
    }
    case OP.INCREASE: case OP.COUNTER: {
      this.thread(d, tid, t);	// the thread of the event is seen
      const name = str || '';
      let c = d.counters.get(name);
      if (!c) { c = { value: 0, points: [] }; d.counters.set(name, c); }
      c.value = op === OP.INCREASE ? c.value + arg : arg;
      c.points.push([t, c.value]);
      break;
    }
    case OP.SWITCH: case OP.SIGNAL: case OP.SIGNAL_NEW: {
      if (op !== OP.SWITCH) {
        const to = this.thread(d, tid, t), from = this.thread(d, arg, t);
        if (to || from) d.signals.push({ t, from: arg, to: tid, ra: cur(from, to), rb: cur(to, from) });
        if (op === OP.SIGNAL_NEW) break;
      }
      const was = d.running.get(ring);
      if (was && was.th === tid) break;
      if (was) {
        d.runs.push({ th: was.th, t0: was.t0, t1: t, row: was.row });
        const prev = d.threads.get(was.th);
        if (prev) prev.running += t - was.t0;
      }
      if (tid === -1) d.running.delete(ring);
      else d.running.set(ring, { th: tid, t0: t, row: cur(this.thread(d, tid, t)) });
      break;
    }
    case OP.GC:
      d.gcs.push({ t0: t - arg / 1e6, t1: t });
      break;
    case OP.EVTCHN_SEND: {
      const s = { t, th: tid, port: arg, row: cur(this.thread(d, tid, t)) };
      d.sends.push(s);
      d.lastPort.set(arg, s);
      break;
    }
    case OP.EVTCHN_RECV: {
      const rv = { t, th: tid, port: arg, row: cur(this.thread(d, tid, t)) };
      d.recvs.push(rv);
      // Within one guest, a send on this port and the receive that follows it.
      const s = d.lastPort.get(arg);
      if (s && s.t <= t) {
        d.joins.push({ ts: s.t, t: t, t1: t, from: s.th, to: tid, port: arg, ra: s.row, rb: rv.row });
        d.lastPort.delete(arg);
      }
      break;
    }
    default:
      break;
    }
  }

  // Drop what lies before the window or beyond the event cap.
  prune(now) {
    let cutoff = now - this.spanMs;
    const lists = ['creates', 'reads', 'resolves', 'fulfills', 'fails', 'signals', 'becomes',
      'labels', 'sends', 'recvs', 'gcs', 'runs', 'joins'];
    const count = () => {
      let n = 0;
      for (const d of this.domains.values()) {
        for (const l of lists) n += d[l].length;
        n += d.order.length;
        for (const c of d.counters.values()) n += c.points.length;
      }
      return n;
    };
    let n = count();
    for (let guard = 0; guard < 20 && (n > this.maxEvents || guard === 0); guard++) {
      if (guard > 0) cutoff += (now - cutoff) * 0.2;	// over the cap: keep less
      // now is on the fleet axis, a domain's times on its host's timeline
      for (const d of this.domains.values()) this.pruneDomain(d, cutoff + this.shiftMs(d), lists);
      n = count();
    }
    this.stored = n;
  }

  pruneDomain(d, cutoff, lists) {
    const tOf = x => (x.t1 !== undefined ? x.t1 : x.t);
    for (const l of lists) {
      const a = d[l];
      let k = 0;
      while (k < a.length && tOf(a[k]) < cutoff) k++;
      if (k) a.splice(0, k);
    }
    for (const c of d.counters.values()) {
      let k = 0;
      while (k < c.points.length - 1 && c.points[k][0] < cutoff) k++;
      if (k) c.points.splice(0, k);
    }
    for (const band of d.vcpus.values()) {
      let k = 0;
      while (k < band.length && band[k].t1 < cutoff) k++;
      if (k) band.splice(0, k);
    }
    // Threads that ended before the window go; pending ones stay (open to now).
    let gone = 0;
    for (const th of d.order) if (th.end !== null && th.end < cutoff) gone++;
    if (gone) {
      d.order = d.order.filter(th => {
        if (th.end !== null && th.end < cutoff) { this.forget(d, th); return false; }
        return true;
      });
    }
    if (d.order.length > this.maxEvents / 2) {
      // Pending threads past the cap: the oldest go.
      const drop = d.order.splice(0, d.order.length - Math.floor(this.maxEvents / 2));
      for (const th of drop) this.forget(d, th);
    }
    if (gone || d.forgotten) {
      for (let r = 0; r < d.rowSegs.length; r++) d.rowSegs[r] = d.rowSegs[r].filter(sg => !sg.th.gone);
      d.forgotten = false;
    }
  }

  forget(d, th) {
    if (d.threads.get(th.id) === th) d.threads.delete(th.id);
    th.gone = true;
    d.forgotten = true;
  }

  // What the tests compare with mtrace-cat -f json: per domain of host (by domid), the
  // events as received.
  summary(host = '') {
    const out = {};
    for (const d of this.domains.values()) {
      if (d.host !== host) continue;
      const ids = new Set();
      for (const th of d.threads.keys()) ids.add(th);
      out[d.domid] = {
        name: d.name, alive: d.alive, reason: d.reason, events: d.events, aligned: d.aligned,
        threads: [...ids].sort((a, b) => a - b),
        creates: d.creates.map(x => [x.from, x.to]),
        reads: d.reads.filter(x => x.op === OP.READ).map(x => [x.to, x.from]),
        resolves: d.resolves.map(x => [x.from, x.to, x.failed ? 1 : 0]),
        labels: d.labels.map(x => [x.th, x.label]),
        sends: d.sends.map(x => [x.th, x.port]),
      };
    }
    return out;
  }
}

// Guest strings on the canvas and in details: text only, and control bytes visible.
function printable(s, max) {
  let out = '';
  for (const ch of String(s)) {
    const c = ch.codePointAt(0);
    out += c < 0x20 || c === 0x7f ? '\\x' + c.toString(16).padStart(2, '0') : ch;
    if (max && out.length >= max) return out.slice(0, max) + '\u2026';
  }
  return out;
}

window.MtraceModel = { Model, OP, printable, domKey };
