/*
 * cat-chrome.c - mtrace events as Chrome trace-event JSON with causality.
 *
 * Layout: pid = domid.  Each ring of a domain has a scheduler track (idle intervals),
 * a GC track, and one track per thread; on a thread's track a "thread" slice spans
 * creation (or first sight) to resolve or fail, with "running" slices inside it.
 * Perfetto reads tids as 32-bit and system-wide, so tids are handed out in order of
 * first sight (from TID_FIRST) rather than derived from the 64-bit thread ids, which
 * are in the args and track names.  A finished thread keeps its tid while it is among the
 * last FINISHED_MAX finished ones (a read of a resolved promise lands on its track);
 * older ones are forgotten, so memory follows the live threads.
 *
 * Times: every domain's events on one host timeline (timeline.h: its dom0's
 * CLOCK_REALTIME), relative to the smallest time of the whole trace, which is its base
 * (its wall clock is in the trailing metadata): the objects are written aside with
 * host times and made relative at the end (chrome-time.c), so nothing is held at an
 * origin.  They are written from integers as µs with three decimals: Perfetto reads
 * "ts" from its text, exactly to the ns at any length; a reader that takes it as a
 * double (chrome://tracing, JS) still rounds back to the exact ns for traces under
 * 2^52 * 0.0005 µs (26 days).  A ring's times are made monotonic (a guest clock or a
 * map that steps back is held at its highest value, counted as clamped) so every track
 * is ordered, which B/E nesting needs.  A domain whose clock is not on the host
 * timeline (an unknown map) keeps its guest time and its process name says so.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cat-chrome.h"
#include "cat-format.h"
#include "chrome-emit.h"
#include "chrome-time.h"
#include "ops.h"
#include "thread-table.h"

#define FINISHED_MAX (1u << 16) /* finished threads that keep their track */
/*
 * Perfetto makes a thread (tid = pid) for every event without a tid (process names,
 * counters), and a tid seen under another pid becomes a new thread with a new track:
 * tids start above every domid (16 bits) so they never meet a pid.
 */
#define TID_FIRST (1u << 16)

enum {
	OPEN_LIFE = 1,
	OPEN_RUN = 2
};

struct ring_state {
	uint64_t max_ts;
	int64_t cur_thread; /* running thread, if cur_valid */
	uint64_t gc_end;
	uint32_t sched_tid, gc_tid;
	bool cur_valid, idle_open, seen;
};

struct track {
	uint32_t tid;
	uint8_t open;
	uint32_t type; /* the thread type its slice is named after, if typed */
	bool typed, finished;
	bool ever; /* had its thread slice: later events of it open none (docs/figures.md) */
};

struct proc {
	uint64_t last_ts; /* the domain's last time: where its open slices end */
	bool unaligned;   /* its process name says its clock is not on the timeline */
	char name[280];
};

static struct {
	struct ttab rings;  /* (domid, ring) */
	struct ttab tracks; /* (ring << 32 | domid, thread): live + recently finished */
	struct ttab procs;  /* (domid, 0): process named, its last time */
	struct chrome_counters counters;
	struct ttab_fifo fifo; /* finished threads, oldest first */
	size_t finished;
	uint64_t clamped; /* events held at their ring's last time (or at 0) */
	uint32_t next_tid;
	bool init;
	FILE *body;            /* the objects, until the base is known */
	struct chrome_emit em; /* the array being written */
	struct chrome_pairs pairs;
} C;

/* Where the objects go until cat_chrome_end. */
static FILE *body(FILE *f)
{
	return C.body ? C.body : f;
}

static void init(void)
{
	if (C.init)
		return;
	ttab_init(&C.rings, sizeof(struct ring_state));
	ttab_init(&C.tracks, sizeof(struct track));
	ttab_init(&C.procs, sizeof(struct proc));
	chrome_counters_init(&C.counters);
	chrome_emit_reset(&C.em);
	C.next_tid = TID_FIRST;
	C.init = true;
}

static struct proc *proc_ensure(FILE *f, uint32_t domid, const char *name)
{
	int fresh;
	struct proc *p = ttab_put(&C.procs, domid, 0, &fresh);

	if (!p || (!fresh && !name))
		return p;
	if (name)
		snprintf(p->name, sizeof(p->name), "%s", name);
	else
		snprintf(p->name, sizeof(p->name), "dom%u", domid);
	p->unaligned = false;
	chrome_process_name(&C.em, f, domid, p->name);
	return p;
}

/* The process's name says its times are the guest's own (the last name wins). */
static void proc_unaligned(FILE *f, uint32_t domid, struct proc *p)
{
	char buf[340];

	p->unaligned = true;
	snprintf(buf, sizeof(buf), "%s [clock not on the host timeline]", p->name);
	chrome_process_name(&C.em, f, domid, buf);
}

static struct ring_state *ring_get(FILE *f, uint32_t domid, uint32_t ring)
{
	int fresh;
	struct ring_state *r = ttab_put(&C.rings, domid, ring, &fresh);
	char buf[48];

	if (r && fresh) {
		r->sched_tid = C.next_tid++;
		r->gc_tid = C.next_tid++;
		snprintf(buf, sizeof(buf), "ring %u", ring);
		chrome_thread_name(&C.em, f, domid, r->sched_tid, buf);
		snprintf(buf, sizeof(buf), "GC (ring %u)", ring);
		chrome_thread_name(&C.em, f, domid, r->gc_tid, buf);
	}
	return r;
}

/* A thread is finished (or only ever seen from others): it may be forgotten later. */
static void finish(struct track *t, uint64_t k1, uint64_t k2)
{
	if (t->finished)
		return;
	t->finished = true;
	C.finished++;
	ttab_fifo_push(&C.fifo, k1, k2);
	while (C.finished > FINISHED_MAX) {
		uint64_t a, b;
		struct track *o;
		if (!ttab_fifo_pop(&C.fifo, &a, &b))
			break;
		o = ttab_get(&C.tracks, a, b);
		if (o && o->finished) {
			ttab_del(&C.tracks, a, b, NULL);
			C.finished--;
		}
	}
}

#define track_k1(domid, ring) ((uint64_t)(ring) << 32 | (domid))

/* The thread's track, made (with a tid and a name) when first seen. */
static struct track *track(FILE *f, uint32_t domid, uint32_t ring, int64_t thread)
{
	int fresh;
	struct track *t = ttab_put(&C.tracks, track_k1(domid, ring), (uint64_t)thread, &fresh);
	char buf[64];

	if (t && fresh) {
		t->tid = C.next_tid++;
		if (ring)
			snprintf(buf, sizeof(buf), "thread %" PRId64 " (ring %u)", thread, ring);
		else
			snprintf(buf, sizeof(buf), "thread %" PRId64, thread);
		chrome_thread_name(&C.em, f, domid, t->tid, buf);
	}
	return t;
}

/*
 * The name of a thread's slice: its E carries the same name, as Perfetto matches an
 * E that has a name only to an open slice of that name.
 */
static void life_name(char *buf, size_t size, const struct track *t, int64_t thread)
{
	if (t->typed)
		snprintf(buf, size, "%s %" PRId64, mtrace_thread_type_name(t->type), thread);
	else
		snprintf(buf, size, "thread %" PRId64, thread);
}

/*
 * The thread's track, opening its "thread" slice when first seen (docs/figures.md:
 * an event of the thread, or one that resolves or signals it, before any creation).
 * A thread that has ended stays ended: its later events land on its track with no
 * slice of their own, and only a creation of its id starts another.
 */
static struct track *live(FILE *f, uint32_t domid, uint32_t ring, int64_t thread, uint64_t ts)
{
	struct track *t = track(f, domid, ring, thread);
	char buf[64];

	if (!t || t->ever)
		return t;
	if (t->finished) {
		t->finished = false; /* its fifo entry is skipped when it comes up */
		C.finished--;
	}
	if (!(t->open & OPEN_LIFE)) {
		t->ever = true;
		t->typed = false;
		life_name(buf, sizeof(buf), t, thread);
		chrome_head(&C.em, f, "B", domid, t->tid, ts, buf, "thread");
		fprintf(f, ",\"args\":{\"id\":%" PRId64 ",\"ring\":%u,\"from\":\"first sight\"}}",
		    thread, ring);
		t->open |= OPEN_LIFE;
	}
	return t;
}

static void stop_running(FILE *f, uint32_t domid, uint32_t ring, struct ring_state *r, uint64_t ts)
{
	if (r->idle_open) {
		chrome_head(&C.em, f, "E", domid, r->sched_tid, ts, "idle", "run");
		fputc('}', f);
		r->idle_open = false;
	} else if (r->cur_valid) {
		struct track *t =
		    ttab_get(&C.tracks, track_k1(domid, ring), (uint64_t)r->cur_thread);
		if (t && (t->open & OPEN_RUN)) {
			chrome_head(&C.em, f, "E", domid, t->tid, ts, "running", "run");
			fputc('}', f);
			t->open &= (uint8_t)~OPEN_RUN;
		}
	}
	r->cur_valid = false;
}

static void run(
    FILE *f, uint32_t domid, uint32_t ring, struct ring_state *r, int64_t thread, uint64_t ts)
{
	struct track *t;

	if (thread == -1) {
		if (r->idle_open)
			return;
		stop_running(f, domid, ring, r, ts);
		chrome_head(&C.em, f, "B", domid, r->sched_tid, ts, "idle", "run");
		fputc('}', f);
		r->idle_open = true;
		return;
	}
	t = live(f, domid, ring, thread, ts);
	if (!t || (r->cur_valid && r->cur_thread == thread && (t->open & OPEN_RUN)))
		return;
	stop_running(f, domid, ring, r, ts);
	t = live(f, domid, ring, thread, ts); /* stop_running may not drop it, but be sure */
	if (!t)
		return;
	chrome_head(&C.em, f, "B", domid, t->tid, ts, "running", "run");
	fputc('}', f);
	t->open |= OPEN_RUN;
	r->cur_thread = thread;
	r->cur_valid = true;
}

/* End the thread's slice; the caller writes the E's args and closing brace. */
static bool end_life(
    FILE *f, uint32_t domid, uint32_t ring, struct ring_state *r, int64_t thread, uint64_t ts)
{
	uint64_t k1 = track_k1(domid, ring);
	struct track *t = ttab_get(&C.tracks, k1, (uint64_t)thread);
	uint32_t tid;
	char name[64];

	if (!t || !(t->open & OPEN_LIFE))
		return false;
	tid = t->tid;
	life_name(name, sizeof(name), t, thread);
	if (t->open & OPEN_RUN) {
		chrome_head(&C.em, f, "E", domid, tid, ts, "running", "run");
		fputc('}', f);
	}
	if (r && r->cur_valid && r->cur_thread == thread)
		r->cur_valid = false;
	t->open = 0;
	finish(t, k1, (uint64_t)thread); /* may free t */
	chrome_head(&C.em, f, "E", domid, tid, ts, name, "thread");
	return true;
}

/*
 * The track of an instant or a flow end.  An instant needs a slice around it: the
 * thread's own when it is live, the idle slice on the scheduler track, else a
 * zero-length marker (a resolved thread being read, a thread never seen alive in this
 * capture).  A flow end always gets its marker (flow set): Perfetto binds a flow to
 * the topmost slice on the track as it stands, which may be an instant that ended
 * long before, so the marker pins the arrow to its time.
 */
static uint32_t endpoint(FILE *f, uint32_t domid, uint32_t ring, struct ring_state *r,
    int64_t thread, uint64_t ts, bool flow)
{
	struct track *t = NULL;
	uint32_t tid;
	char buf[64];

	if (thread == -1) {
		tid = r->sched_tid;
		if (r->idle_open && !flow)
			return tid;
		snprintf(buf, sizeof(buf), "scheduler");
	} else {
		t = track(f, domid, ring, thread);
		if (!t)
			return r->sched_tid;
		tid = t->tid;
		if ((t->open & OPEN_LIFE) && !flow)
			return tid;
		if (!(t->open & OPEN_LIFE))
			finish(t, track_k1(domid, ring), (uint64_t)thread); /* seen, never alive */
		snprintf(buf, sizeof(buf), "thread %" PRId64, thread);
	}
	chrome_head(&C.em, f, "X", domid, tid, ts, buf, "marker");
	fprintf(f, ",\"dur\":0,\"args\":{\"id\":%" PRId64 "}}", thread);
	return tid;
}

/* A flow arrow from one thread's track to another's. */
static void arrow(FILE *f, uint32_t domid, uint32_t ring, struct ring_state *r, int64_t from,
    int64_t to, uint64_t ts, const char *cat)
{
	uint32_t a = endpoint(f, domid, ring, r, from, ts, true);

	chrome_flow(&C.em, f, domid, a, endpoint(f, domid, ring, r, to, ts, true), ts, cat);
}

void cat_chrome_begin(FILE *f)
{
	(void)f;
	init();
	/* the objects wait aside for the base; without a temporary file they go straight
	 * to f, their times absolute (said in the metadata) */
	C.body = chrome_body_open();
	if (!C.body)
		fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f);
}

void cat_chrome_domain_up(FILE *f, uint32_t domid, const char *name)
{
	char buf[280];

	init();
	snprintf(buf, sizeof(buf), "%.256s (dom%u)", name ? name : "", domid);
	proc_ensure(body(f), domid, buf);
}

struct chrome_emit *cat_chrome_domain(FILE **f, uint32_t domid)
{
	init();
	*f = body(*f);
	return proc_ensure(*f, domid, NULL) ? &C.em : NULL;
}

uint32_t cat_chrome_event(FILE *f, const Mtrace__EventBatch *b, size_t i, const struct tl_time *at,
    const char *str, uint64_t *written)
{
	uint32_t domid = b->domid, ring = b->ring, from, to, tid = 0;
	unsigned op = b->op[i];
	int64_t th = b->thread[i], arg = b->arg[i];
	struct ring_state *r;
	struct proc *p;
	uint64_t ts;
	char buf[64];

	init();
	f = body(f);
	if (at->host_ns < 0) {
		C.clamped++; /* before 1970: no trace of ours is */
		ts = 0;
	} else {
		ts = (uint64_t)at->host_ns;
	}
	p = proc_ensure(f, domid, NULL);
	r = ring_get(f, domid, ring);
	if (!r || !p)
		return 0;
	if (!at->known && !p->unaligned)
		proc_unaligned(f, domid, p);
	if (r->seen && ts < r->max_ts) {
		ts = r->max_ts;
		C.clamped++;
	}
	r->max_ts = ts;
	r->seen = true;
	*written = ts;
	if (ts > p->last_ts)
		p->last_ts = ts;
	/* Every op but these is something the thread itself did: it is seen (mtraced's
	 * rule, docs/figures.md). */
	if (th != -1 && op != MTRACE_OP_GC &&
	    !(op >= MTRACE_OP_RING_START && op <= MTRACE_OP_MODULE))
		live(f, domid, ring, th, ts);
	switch (op) {
	case MTRACE_OP_CREATES: {
		struct track *t;
		from = endpoint(f, domid, ring, r, th, ts, true);
		if (end_life(f, domid, ring, r, arg, ts))
			fputs(",\"args\":{\"ended_by\":\"id reused\"}}", f);
		t = track(f, domid, ring, arg);
		if (!t)
			break;
		if (t->finished) {
			t->finished = false;
			C.finished--;
		}
		if (!(t->open & OPEN_LIFE)) {
			const char *type;
			t->ever = true;
			t->type = i < b->n_type ? b->type[i] : MTRACE_TT_UNKNOWN;
			t->typed = true;
			type = mtrace_thread_type_name(t->type);
			life_name(buf, sizeof(buf), t, arg); /* "Bind 12" */
			chrome_head(&C.em, f, "B", domid, t->tid, ts, buf, "thread");
			fprintf(f,
			    ",\"args\":{\"id\":%" PRId64 ",\"ring\":%u,\"type\":\"%s\","
			    "\"parent\":%" PRId64 "}}",
			    arg, ring, type, th);
			t->open |= OPEN_LIFE;
		}
		chrome_flow(&C.em, f, domid, from, t->tid, ts, "creates");
		break;
	}
	case MTRACE_OP_READ:
	case MTRACE_OP_READ_LATER:
	case MTRACE_OP_SIGNAL:
	case MTRACE_OP_SIGNAL_NEW: /* arg's result reaches th, which runs (not for Eio's) */
		if ((op == MTRACE_OP_SIGNAL || op == MTRACE_OP_SIGNAL_NEW) && arg != -1)
			live(f, domid, ring, arg, ts); /* the notifier is a thread seen */
		if (op == MTRACE_OP_READ || op == MTRACE_OP_SIGNAL)
			run(f, domid, ring, r, th, ts);
		arrow(f, domid, ring, r, arg, th, ts,
		    op == MTRACE_OP_READ || op == MTRACE_OP_READ_LATER ? "read" : "signal");
		break;
	case MTRACE_OP_FULFILLS:
	case MTRACE_OP_FAILS:
		if (arg != -1)
			live(f, domid, ring, arg, ts); /* first sight of the target */
		arrow(f, domid, ring, r, th, arg, ts, "resolve");
		if (end_life(f, domid, ring, r, arg, ts)) {
			fprintf(f, ",\"args\":{\"resolved_by\":%" PRId64, th);
			if (op == MTRACE_OP_FAILS) {
				fputs(",\"failed\":true,\"exn\":", f);
				chrome_str(&C.em, f, str);
			}
			fputs("}}", f);
		}
		break;
	case MTRACE_OP_BECOMES:
		arrow(f, domid, ring, r, th, arg, ts, "becomes");
		break;
	case MTRACE_OP_SWITCH:
		run(f, domid, ring, r, th, ts);
		break;
	case MTRACE_OP_LABEL:
		to = endpoint(f, domid, ring, r, th, ts, false);
		if (th != -1)
			chrome_thread_name(&C.em, f, domid, to, str ? str : "");
		chrome_instant(&C.em, f, domid, to, ts, "label", "label");
		fputs(",\"args\":{\"label\":", f);
		chrome_str(&C.em, f, str);
		fputs("}}", f);
		break;
	case MTRACE_OP_INCREASE:
	case MTRACE_OP_COUNTER:
		chrome_counter_event(&C.em, &C.counters, f, domid, str ? str : "", arg,
		    op == MTRACE_OP_INCREASE, ts);
		break;
	case MTRACE_OP_GC: {
		uint64_t dur = (uint64_t)arg, start = dur > ts ? 0 : ts - dur;
		if (start < r->gc_end)
			start = r->gc_end; /* overlapping GCs would break the track's nesting */
		r->gc_end = ts;
		/* B/E, not X: Perfetto reads an X's dur as (int64)(double * 1000), which
		 * can lose a ns; it reads "ts" from its text, exactly. */
		chrome_head(&C.em, f, "B", domid, r->gc_tid, start, "GC", "gc");
		fprintf(f, ",\"args\":{\"duration_ns\":%" PRIu64 "}}", dur);
		chrome_head(&C.em, f, "E", domid, r->gc_tid, ts, "GC", "gc");
		fputc('}', f);
		break;
	}
	case MTRACE_OP_TRY_READ:
		chrome_instant(&C.em, f, domid, endpoint(f, domid, ring, r, th, ts, false), ts,
		    "try_read", "try_read");
		fprintf(f, ",\"args\":{\"source\":%" PRId64 "}}", arg);
		break;
	case MTRACE_OP_EVTCHN_SEND:
	case MTRACE_OP_EVTCHN_RECV:
		tid = endpoint(f, domid, ring, r, th, ts, false);
		chrome_instant(&C.em, f, domid, tid, ts, mtrace_op_name(op), "evtchn");
		fprintf(f, ",\"args\":{\"port\":%" PRId64 "}}", arg);
		break;
	case MTRACE_OP_RING_START: {
		char nb[128];
		snprintf(nb, sizeof(nb), "ring %u: %.64s", ring, str ? str : "");
		chrome_thread_name(&C.em, f, domid, r->sched_tid, nb);
		chrome_instant(&C.em, f, domid, r->sched_tid, ts, "ring_start", "ring");
		fputs(",\"args\":{\"name\":", f);
		chrome_str(&C.em, f, str);
		fputs("}}", f);
		break;
	}
	default:
		snprintf(buf, sizeof(buf), "op%u", op);
		chrome_instant(
		    &C.em, f, domid, endpoint(f, domid, ring, r, th, ts, false), ts, buf, "other");
		fprintf(f, ",\"args\":{\"thread\":%" PRId64 ",\"arg\":%" PRId64, th, arg);
		if (str) {
			fputs(",\"str\":", f);
			chrome_str(&C.em, f, str);
		}
		fputs("}}", f);
		break;
	}
	return tid;
}

void cat_chrome_pair(FILE *f, const struct tl_pair *p)
{
	init();
	chrome_pair(&C.em, &C.pairs, body(f), p);
}

struct closing {
	uint32_t domid;
	bool all;
	uint64_t (*keys)[2];
	size_t n, cap;
};

static void collect(void *payload, void *arg)
{
	struct closing *c = arg;
	const struct ttab_entry *e = ttab_entry_of(payload);

	if (!c->all && (uint32_t)e->k1 != c->domid)
		return;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		void *k = realloc(c->keys, cap * sizeof(*c->keys));
		if (!k)
			return;
		c->keys = k;
		c->cap = cap;
	}
	c->keys[c->n][0] = e->k1;
	c->keys[c->n][1] = e->k2;
	c->n++;
}

static uint64_t last_ts(uint32_t domid)
{
	struct proc *p = ttab_get(&C.procs, domid, 0);

	return p ? p->last_ts : 0;
}

/*
 * Close every open slice of a domain (or of all) at the domain's last time: the
 * threads still pending there did not end in the capture, and say so.
 */
static void close_all(FILE *f, bool all, uint32_t domid, const char *why)
{
	struct closing c = { .domid = domid, .all = all };
	size_t i;

	ttab_each(&C.tracks, collect, &c);
	for (i = 0; i < c.n; i++) {
		uint32_t d = (uint32_t)c.keys[i][0], ring = (uint32_t)(c.keys[i][0] >> 32);
		struct ring_state *r = ttab_get(&C.rings, d, ring);
		struct track *t = ttab_get(&C.tracks, c.keys[i][0], c.keys[i][1]);
		if (end_life(f, d, ring, r, (int64_t)c.keys[i][1], last_ts(d))) {
			fprintf(f, ",\"args\":{\"did_not_end\":true,\"ended_by\":\"%s\"}}", why);
		} else if (t && (t->open & OPEN_RUN)) {
			/* an ended thread running again: only its running slice is open */
			chrome_head(&C.em, f, "E", d, t->tid, last_ts(d), "running", "run");
			fputc('}', f);
			t->open &= (uint8_t)~OPEN_RUN;
		}
	}
	c.n = 0;
	ttab_each(&C.rings, collect, &c);
	for (i = 0; i < c.n; i++) {
		struct ring_state *r = ttab_get(&C.rings, c.keys[i][0], c.keys[i][1]);
		if (r && r->idle_open) {
			uint32_t d = (uint32_t)c.keys[i][0];
			chrome_head(&C.em, f, "E", d, r->sched_tid, last_ts(d), "idle", "run");
			fputc('}', f);
			r->idle_open = false;
		}
		if (r)
			r->cur_valid = false;
	}
	free(c.keys);
}

void cat_chrome_domain_down(FILE *f, uint32_t domid)
{
	init();
	close_all(body(f), false, domid, "domain destroyed");
}

int cat_chrome_end(FILE *f, const struct tl *tl)
{
	int rc;

	init();
	close_all(body(f), true, 0, "end of capture");
	rc = chrome_finish(f, C.body, &C.em, &C.pairs, tl, C.clamped);
	C.body = NULL;
	ttab_free(&C.tracks, NULL);
	ttab_free(&C.rings, NULL);
	ttab_free(&C.procs, NULL);
	chrome_counters_free(&C.counters);
	ttab_fifo_free(&C.fifo);
	chrome_emit_free(&C.em);
	C.finished = 0;
	C.clamped = 0;
	memset(&C.pairs, 0, sizeof(C.pairs));
	C.init = false;
	return rc;
}
