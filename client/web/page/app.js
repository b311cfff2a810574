// app.js - the live page: the /events feed into the model, the controls, the details
// panel, and the frame loop.  Guest strings (and, with mtrace-web --nats, host names)
// reach the document only as textContent, and never make a selector.
'use strict';

(function () {
  const { Model, printable } = window.MtraceModel;
  const { View, draw, hitTest, fmtDur, fmtTime, skewText } = window.MtraceRender;
  const $ = id => document.getElementById(id);

  const model = new Model();
  const view = new View();
  const canvas = $('timeline');
  const ctx = canvas.getContext('2d', { alpha: false });
  const state = {
    es: null, instance: null, connected: false, daemon: '', daemonUp: false,
    paused: false, pauseQueue: [], pauseDropped: 0, skewMs: null, lastDrawn: -1,
    dirty: true, domKey: '', hellos: 0, errors: 0, arrival: {}, counts: new Map(), skews: new Map(),
  };
  const PAUSE_QUEUE_MAX = 200000;	// events held while paused

  // A token given in the address was turned into a cookie by the server: drop it from
  // the address bar (and from the history).
  if (location.search.includes('token=')) history.replaceState(null, '', location.pathname);

  function now() {
    // mtrace-web's clock, as best known: the batches say when they arrived there.
    return Date.now() + (state.skewMs === null ? 0 : state.skewMs);
  }

  function setText(id, s) { $(id).textContent = s; }

  function banner() {
    const parts = [];
    if (model.dropped) parts.push(`${model.dropped} events dropped: this browser fell behind the feed`);
    if (state.pauseDropped) parts.push(`${state.pauseDropped} events dropped while paused`);
    if (model.upstreamDropped) parts.push(`${model.upstreamDropped} events dropped by mtraced for mtrace-web`);
    if (model.lostInRing) parts.push(`${model.lostInRing} events lost in guest rings`);
    const b = $('banner');
    b.textContent = parts.join(' \u00b7 ');
    b.hidden = parts.length === 0;
  }

  function status() {
    let s;
    if (!state.connected) s = 'reconnecting to mtrace-web\u2026';
    else if (!state.daemonUp) s = `mtrace-web is not connected to ${state.fleet ? 'NATS' : 'mtraced'} (retrying)`;
    else if (model.fleet()) {
      const hosts = [...model.hosts.values()];
      const gone = hosts.filter(h => h.up === false).length;
      s = `live from ${state.daemon}: ${hosts.length} host${hosts.length === 1 ? '' : 's'}` +
        (gone ? ` (${gone} without mtraced)` : '');
    } else s = `live from ${state.daemon}`;
    setText('status', s);
    $('status').className = state.connected && state.daemonUp ? 'ok' : 'bad';
  }

  function apply(b) {
    // When batches arrive, per domain (benchmarks).
    const k = MtraceModel.domKey(b.host || '', b.d);
    const at = performance.now(), w = state.arrival[k] || (state.arrival[k] = [at, at]);
    w[1] = at;
    model.batch(b);
    // Now is where the data is: the latest host time drawn (a recording, or the fleet
    // stream read from its start, lies in the past), else when mtrace-web received it
    // -- never later than that (a guest's clock ahead, or hostile, cannot move now).
    // A fleet's axis is NATS's clock: a host's times moved by its skew (model.fleetT).
    const d = model.domain(b.host || '', b.d);
    const ref = b.ho !== undefined && d ? Math.min(model.fleetT(d, d.lastT), b.w) : b.w;
    const skew = ref - Date.now();
    if (state.skewMs === null || skew > state.skewMs) state.skewMs = skew;
  }

  function connect() {
    const es = new EventSource('events');
    state.es = es;
    es.addEventListener('hello', e => {
      const h = JSON.parse(e.data);
      if (state.instance !== h.instance) {
        // Another mtrace-web (restarted): its history replaces ours.
        if (state.instance !== null) model.reset();
        state.instance = h.instance;
        state.skewMs = null;
      }
      state.connected = true;
      if (h.types) model.typeNames = h.types;
      state.daemon = h.daemon;
      state.daemonUp = h.connected;
      state.fleet = model.fleetFeed = !!h.fleet;
      state.hellos++;
      status();
      // Domains whose DomainUp lies before where this stream starts: from the state.
      resync();
    });
    es.addEventListener('b', e => {
      const b = JSON.parse(e.data);
      if (state.paused) {
        if (state.pauseQueue.length < PAUSE_QUEUE_MAX) state.pauseQueue.push(b);
        else state.pauseDropped += b.op.length;
        return;
      }
      apply(b);
    });
    es.addEventListener('vcpu', e => model.vcpu(JSON.parse(e.data)));
    es.addEventListener('up', e => { model.domainUp(JSON.parse(e.data)); domainList(); });
    es.addEventListener('clock', e => model.clockMap(JSON.parse(e.data)));
    // A pair comes after the batch of its later end: held with the batches when paused.
    es.addEventListener('pair', e => {
      const p = JSON.parse(e.data);
      if (state.paused) { if (state.pauseQueue.length < PAUSE_QUEUE_MAX) state.pauseQueue.push({ pair: p }); return; }
      MtracePairs.addPair(model, p);
    });
    es.addEventListener('skew', e => { model.hostSkew(JSON.parse(e.data)); counts(model.sortedDomains()); });
    es.addEventListener('down', e => { model.domainDown(JSON.parse(e.data)); domainList(); });
    es.addEventListener('daemon', e => {
      const d = JSON.parse(e.data);
      if (d.host !== undefined) {
        // One host's mtraced, as its Hello and Goodbye in the fleet stream say.
        const h = model.host(d.host);
        h.up = d.connected;
        if (d.daemon) h.daemon = d.daemon;
        state.domKey = '';
        domainList();
        status();
        model.version++;
        return;
      }
      state.daemonUp = d.connected;
      if (d.daemon) state.daemon = d.daemon;
      status();
    });
    es.addEventListener('loss', e => {
      const l = JSON.parse(e.data);
      model.upstreamDropped += l.dropped_for_client;
      model.lostInRing += l.lost_in_ring;
      banner();
    });
    es.addEventListener('stats', e => {
      const s = JSON.parse(e.data);
      for (const ds of s.domains) {
        const d = model.dom(s.host || '', ds.domid);
        d.stats = ds;
        if (!d.name) d.name = ds.name;
      }
      model.version++;
    });
    es.addEventListener('dropped', e => {
      const d = JSON.parse(e.data);
      model.dropped += d.dropped;
      banner();
      resync();
    });
    es.onerror = () => {
      // EventSource reconnects by itself, with Last-Event-ID.
      state.connected = false;
      state.errors++;
      status();
    };
  }

  // After a gap, domain names and states come from /api/state.
  function resync() {
    fetch('api/state').then(r => r.json()).then(s => {
      for (const x of s.domains) {
        const d = model.dom(x.host || '', x.domid);
        d.name = x.name; d.alive = x.alive; d.reason = x.reason;
      }
      for (const x of s.hosts || []) {
        const h = model.host(x.host);
        h.up = x.connected;
        if (x.daemon) h.daemon = x.daemon;
        if (x.skew) model.hostSkew(x.skew);
      }
      state.domKey = '';
      model.version++;
      status();	// the hosts it counts
    }).catch(() => {});
  }

  // --- The sidebar ---------------------------------------------------------------
  // Domains by host (a fleet: a heading per host, with its events), then domid.  The
  // counts are found again through state.counts, never by a selector made of a name.
  function domainList() {
    const doms = model.sortedDomains(), fleet = model.fleet();
    const key = (fleet ? [...model.hosts.values()].map(h => `${h.host}:${h.up}`).join('|') : '') + '#' +
      doms.map(d => `${d.key}:${d.name}:${d.alive}:${d.reason}`).join('|');
    if (key === state.domKey) { counts(doms); return; }
    state.domKey = key;
    state.counts = new Map();
    state.skews = new Map();
    const ul = $('domains');
    ul.replaceChildren();
    let lastHost = null;
    for (const d of doms) {
      if (fleet && d.host !== lastHost) {
        lastHost = d.host;
        const h = model.host(d.host);
        const li = document.createElement('li');
        li.className = 'host';
        li.dataset.host = d.host;
        const cb = document.createElement('input');
        cb.type = 'checkbox';
        cb.checked = !view.hiddenHosts.has(d.host);
        cb.addEventListener('change', () => {
          if (cb.checked) view.hiddenHosts.delete(d.host); else view.hiddenHosts.add(d.host);
          state.dirty = true;
        });
        const name = document.createElement('span');
        name.className = 'name';
        name.textContent = printable(d.host, 80);
        name.title = printable(h.daemon || '', 200);
        const label = document.createElement('label');
        label.append(cb, name);
        const st = document.createElement('span');
        st.className = h.up === false ? 'dead' : 'alive';
        st.textContent = h.up === false ? 'mtraced gone' : 'host';
        const count = document.createElement('span');
        count.className = 'count';
        state.counts.set(h, count);
        const sk = document.createElement('span');	// its clock against NATS
        sk.className = 'skew';
        state.skews.set(h, sk);
        li.append(label, st, count, sk);
        ul.append(li);
      }
      const li = document.createElement('li');
      li.dataset.domid = d.domid;
      li.dataset.host = d.host;
      const cb = document.createElement('input');
      cb.type = 'checkbox';
      cb.checked = !view.hidden.has(d.key);
      cb.addEventListener('change', () => {
        if (cb.checked) view.hidden.delete(d.key); else view.hidden.add(d.key);
        state.dirty = true;
      });
      const name = document.createElement('span');
      name.className = 'name';
      name.textContent = `${d.domid} ${printable(d.name || '?', 60)}`;
      const st = document.createElement('span');
      st.className = d.alive ? 'alive' : 'dead';
      st.textContent = d.alive ? 'running' : printable(d.reason || 'down', 40);
      const count = document.createElement('span');
      count.className = 'count';
      state.counts.set(d.key, count);
      const label = document.createElement('label');
      label.append(cb, name);
      li.append(label, st, count);
      ul.append(li);
    }
    counts(doms);
  }

  function counts(doms) {
    for (const d of doms) {
      const el = state.counts.get(d.key);
      // docs/figures.md's created and pending, as mtrace-top and the exporter say them
      if (el) el.textContent = `${d.fig.created} thr, ${d.fig.created - d.fig.ended} pending, ${d.events} ev` +
        (d.stats ? `, ${Math.round(d.stats.rate_1s)}/s` : '');
    }
    for (const h of model.hosts.values()) {
      const el = state.counts.get(h);
      if (el) el.textContent = `${doms.filter(d => d.host === h.host).length} domains, ${model.hostEvents(h.host)} ev`;
      const sk = state.skews.get(h);
      if (sk) sk.textContent = skewText(h);
    }
  }

  function details(th) {
    const box = $('details');
    box.replaceChildren();
    if (!th) { box.hidden = true; return; }
    box.hidden = false;
    const d = th.dom;
    // resolved, not where its line ends: a thread that became another is still pending
    const end = th.resolved;
    const life = (end === null ? now() : end) - th.created;
    const rows = [
      ['host', model.fleet() ? printable(d.host, 80) : ''],
      ['domain', `${d.domid} ${printable(d.name, 80)}`],
      ['thread', String(th.id)],
      ['label', printable(th.label || '(none)')],
      ['type', th.type],
      ['parent', th.parent === -1 ? '(unknown)' : String(th.parent)],
      ['created', fmtTime(th.created, 0.001)],
      ['resolved', end === null ? 'pending' : `${fmtTime(end, 0.001)}${th.failed ? ' (failed)' : ''}`],
      ['exception', th.failed ? printable(th.exn || '(none)') : ''],
      ['becomes', th.becomes === -1 ? '' : String(th.becomes)],
      ['reads', String(th.reads)],
      ['resolves', String(th.resolves)],
      ['children', String(th.children)],
      ['running', fmtDur(th.running + runningNow(th))],
      [end === null ? 'pending for' : 'lifetime', fmtDur(life)],
    ];
    const h = document.createElement('h3');
    h.textContent = 'Thread';
    const close = document.createElement('button');
    close.textContent = '\u00d7';
    close.title = 'close (Esc)';
    close.addEventListener('click', () => select(null));
    h.append(close);
    const dl = document.createElement('dl');
    for (const [k, v] of rows) {
      if (v === '') continue;
      const dt = document.createElement('dt'), dd = document.createElement('dd');
      dt.textContent = k;
      dd.textContent = v;
      dd.dataset.field = k;
      dl.append(dt, dd);
    }
    box.append(h, dl);
  }

  function runningNow(th) {
    for (const r of th.dom.running.values()) if (r.th === th.id) return now() - r.t0;
    return 0;
  }

  function select(th) {
    view.selected = th ? { key: th.dom.key, id: th.id } : null;
    details(th);
    state.dirty = true;
  }

  // --- Controls ------------------------------------------------------------------
  function setFollow(on) {
    view.follow = on;
    $('follow').classList.toggle('on', on);
    $('follow').setAttribute('aria-pressed', String(on));
    state.dirty = true;
  }

  function setPaused(on) {
    state.paused = on;
    $('pause').textContent = on ? 'Resume' : 'Pause';
    $('pause').classList.toggle('on', on);
    if (!on) {
      const q = state.pauseQueue;
      state.pauseQueue = [];
      for (const b of q) if (b.pair) MtracePairs.addPair(model, b.pair); else apply(b);
    } else {
      setFollow(false);
    }
    banner();
    state.dirty = true;
  }

  function zoom(factor, x) {
    const W = canvas.clientWidth;
    const frac = view.follow ? 1 : x / W;
    const at = view.t0 + frac * view.spanMs;
    view.spanMs = Math.min(Math.max(view.spanMs * factor, 0.001), 24 * 3600 * 1000);
    view.t1 = at + (1 - frac) * view.spanMs;
    state.dirty = true;
  }

  function pan(dxPx, dyPx) {
    const W = canvas.clientWidth;
    if (dxPx) {
      setFollow(false);
      view.t1 -= dxPx / W * view.spanMs;
    }
    if (dyPx) {
      const maxScroll = Math.max((view.contentH || 0) - canvas.clientHeight + 40, 0);
      view.scrollY = Math.min(Math.max(view.scrollY - dyPx, 0), maxScroll);
    }
    state.dirty = true;
  }

  function resize() {
    const r = canvas.getBoundingClientRect(), dpr = window.devicePixelRatio || 1;
    canvas.width = Math.max(1, Math.round(r.width * dpr));
    canvas.height = Math.max(1, Math.round(r.height * dpr));
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    state.dirty = true;
  }

  let drag = null;
  canvas.addEventListener('mousedown', e => { drag = { x: e.clientX, y: e.clientY, moved: 0 }; });
  window.addEventListener('mousemove', e => {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    drag.moved += Math.abs(dx) + Math.abs(dy);
    drag.x = e.clientX; drag.y = e.clientY;
    if (drag.moved > 3) pan(dx, dy);
  });
  window.addEventListener('mouseup', e => {
    if (drag && drag.moved <= 3) {
      const r = canvas.getBoundingClientRect();
      select(hitTest(model, view, e.clientX - r.left, e.clientY - r.top, now(), r.width));
    }
    drag = null;
  });
  canvas.addEventListener('wheel', e => {
    e.preventDefault();
    const r = canvas.getBoundingClientRect();
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) pan(-(e.deltaX || e.deltaY), 0);
    else if (e.ctrlKey || e.altKey) pan(0, -e.deltaY);
    else zoom(Math.pow(1.0015, e.deltaY), e.clientX - r.left);
  }, { passive: false });
  window.addEventListener('keydown', e => {
    if (e.target instanceof HTMLInputElement) return;
    const W = canvas.clientWidth;
    switch (e.key) {
    case 'ArrowLeft': pan(W * 0.1, 0); break;
    case 'ArrowRight': pan(-W * 0.1, 0); break;
    case 'ArrowUp': pan(0, 40); break;
    case 'ArrowDown': pan(0, -40); break;
    case '+': case '=': zoom(1 / 1.5, W / 2); break;
    case '-': case '_': zoom(1.5, W / 2); break;
    case 'f': setFollow(!view.follow); break;
    case ' ': case 'p': setPaused(!state.paused); break;
    case 'Escape': select(null); break;
    default: return;
    }
    e.preventDefault();
  });
  $('follow').addEventListener('click', () => setFollow(!view.follow));
  $('pause').addEventListener('click', () => setPaused(!state.paused));
  $('zoomin').addEventListener('click', () => zoom(1 / 1.5, canvas.clientWidth / 2));
  $('zoomout').addEventListener('click', () => zoom(1.5, canvas.clientWidth / 2));
  $('filter').addEventListener('input', e => { view.labelPrefix = e.target.value; state.dirty = true; });
  $('span').addEventListener('change', e => {
    const v = Number(e.target.value);
    if (v > 0) model.spanMs = v * 60000;
  });
  $('cap').addEventListener('change', e => {
    const v = Number(e.target.value);
    if (v >= 1000) model.maxEvents = v;
  });
  window.addEventListener('resize', resize);

  // --- The frame loop ------------------------------------------------------------
  // Frames are paced by what they cost: a slow machine draws less often rather than
  // leave no time to take in the feed (which would make this browser fall behind).
  let nextDraw = 0;
  function frame() {
    const t = now(), wall = performance.now();
    if (view.follow !== $('follow').classList.contains('on')) setFollow(view.follow);
    if ((state.dirty || view.follow || model.version !== state.lastDrawn) && wall >= nextDraw) {
      if (view.follow) view.t1 = t + view.spanMs * 0.02;
      const took = draw(ctx, model, view, t, canvas.clientWidth, canvas.clientHeight);
      nextDraw = wall + Math.max(0, 2 * took - 16);
      state.lastDrawn = model.version;
      state.dirty = false;
    }
    requestAnimationFrame(frame);
  }

  setInterval(() => {
    if (model.latest > -Infinity) { model.prune(now()); MtracePairs.prunePairs(model, now() - model.spanMs); }
    domainList();
    setText('counts', `${model.received} events, ${model.stored} kept`);
    if (view.selected) {
      const d = model.domains.get(view.selected.key);
      const th = d && d.threads.get(view.selected.id);
      if (th) details(th);
    }
  }, 1000);

  // For the tests and benchmarks: the page's own model and view, read-only use.
  window.mtrace = {
    model, view, state,
    summary: (host = '') => model.summary(host),
    figures: (host = '') => model.figures(host),
    selectAt: (x, y) => {
      const r = canvas.getBoundingClientRect();
      const th = hitTest(model, view, x, y, now(), r.width);
      select(th);
      return th ? { host: th.dom.host, domid: th.dom.domid, id: th.id } : null;
    },
    frameStats: () => {
      const f = [...view.frames].sort((a, b) => a - b);
      return { n: f.length, median: f[f.length >> 1] || 0, p95: f[Math.floor(f.length * 0.95)] || 0 };
    },
    select: (domid, id, host = '') => {
      const d = model.domain(host, domid);
      const th = d && d.threads.get(id);
      select(th || null);
      return !!th;
    },
    // Where a thread's line is drawn now (canvas coordinates), or null.
    locate: (domid, id, host = '') => {
      const L = view.layout.find(l => l.d.domid === domid && l.d.host === host);
      const th = L && L.d.threads.get(id);
      if (!th) return null;
      const sh = model.shiftMs(L.d), end = th.end === null ? now() + sh : th.end;
      const t = Math.max(th.created, view.t0 + sh) / 2 + Math.min(end, view.t1 + sh) / 2;
      const W = canvas.clientWidth;
      const seg = th.segs.filter(s => s.t0 <= t).pop() || th.segs[0];
      return { x: (t - sh - view.t0) / view.spanMs * W, y: L.rowsTop + seg.row * view.rowH + view.rowH / 2 };
    },
    // A renderer that stops reading: its main thread busy for ms (tests).
    stall: ms => setTimeout(() => { const end = Date.now() + ms; while (Date.now() < end); }, 0),
    drawOnce: () => draw(ctx, model, view, now(), canvas.clientWidth, canvas.clientHeight),
    now,
  };

  resize();
  setFollow(true);
  status();
  connect();
  requestAnimationFrame(frame);
})();
