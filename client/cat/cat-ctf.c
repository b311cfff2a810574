/*
 * cat-ctf.c - write mtrace events as a CTF 1.8 trace (see cat-ctf.h).
 *
 * The binary layout is mirage-profile's, byte for byte: packets start with {u32
 * magic 0xc1fc1fc1, u8 uuid[16], u32 packet_size bits, u16 packet counter, u32
 * content_size bits}, then packed little-endian events {u64 ns, u8 op, i64 thread
 * (not for gc), fields, NUL-terminated strings}.  mirage-trace-viewer ignores the
 * metadata and hard-codes exactly that; babeltrace2 reads the metadata, which is
 * mirage-profile's with the version babeltrace2 requires (1.8), a clock, and our
 * extra event types.  Packets are written whole (packet_size = content_size).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <dirent.h>

#include "cat-ctf.h"
#include "ops.h"
#include "thread-table.h"
#include "utf8.h"

#define CTF_MAGIC 0xc1fc1fc1u
#define PKT_HDR   30
#define PKT_MAX   (64u * 1024)
#define STR_MAX   MTRACE_STR_MAX
#define EV_MAX    (9 + 17 + STR_MAX + 1)
/* the last ns babeltrace2 converts from a 1 GHz clock without overflow (292 years) */
#define TS_MAX ((uint64_t)(INT64_MAX / 1000000000) * 1000000000 - 1)

static const uint8_t ctf_uuid[16] = { 0x05, 0x88, 0x3b, 0x8d, 0x52, 0x1a, 0x48, 0x7b, 0xb3, 0x97,
	0x45, 0x6a, 0xb1, 0x50, 0x68, 0x0c };

struct stream {
	FILE *f;
	uint8_t *buf;
	size_t used;
	uint16_t count;
	uint64_t last_ts, events;
};

struct dom {
	char name[520]; /* escaped */
	uint32_t clock;
	bool up;
	/* its last clock map, and how many it had */
	int source;
	int64_t offset_ns;
	uint64_t uncertainty_ns, maps;
};

static struct {
	char *dir;
	struct ttab streams; /* (domid, ring << 1 | mtrace-only) */
	struct ttab doms;    /* (domid, 0) */
	char host[520], software[520];
	uint64_t skipped, truncated, clamped;
	int err;             /* first errno of a write or open */
	char err_what[4200]; /* and on what */
	bool open;
} W;

static void write_metadata(void);

int cat_ctf_open(const char *dir, char *err, size_t errlen)
{
	DIR *d;
	struct dirent *e;

	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	d = opendir(dir);
	if (!d) {
		snprintf(err, errlen, "cannot open %s: %s", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			closedir(d);
			snprintf(err, errlen,
			    "%s is not empty: a CTF trace needs a directory of "
			    "its own",
			    dir);
			return -1;
		}
	closedir(d);
	W.dir = strdup(dir);
	ttab_init(&W.streams, sizeof(struct stream));
	ttab_init(&W.doms, sizeof(struct dom));
	W.open = W.dir != NULL;
	if (W.open)
		write_metadata();
	return W.open ? 0 : -1;
}

void cat_ctf_hello(const Mtrace__Hello *h)
{
	if (h) {
		ctf_tsdl_escape(W.host, sizeof(W.host), h->host);
		ctf_tsdl_escape(W.software, sizeof(W.software), h->software);
		if (W.open)
			write_metadata();
	}
}

static struct dom *dom_get(uint32_t domid)
{
	int fresh;

	return ttab_put(&W.doms, domid, 0, &fresh);
}

void cat_ctf_clock_map(const Mtrace__ClockMap *m)
{
	struct dom *d;

	if (!W.open || !(d = dom_get(m->domid)))
		return;
	d->source = m->source;
	d->offset_ns = m->offset_ns;
	d->uncertainty_ns = m->uncertainty_ns;
	d->maps++;
	write_metadata();
}

void cat_ctf_domain_up(uint32_t domid, const char *name, uint32_t clock)
{
	struct dom *d;

	if (!W.open || !(d = dom_get(domid)))
		return;
	ctf_tsdl_escape(d->name, sizeof(d->name), name);
	d->clock = clock;
	d->up = true;
	write_metadata();
}

static void fail(int e, const char *what)
{
	if (!W.err) {
		W.err = e ? e : EIO;
		snprintf(W.err_what, sizeof(W.err_what), "%s", what);
	}
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void flush_packet(struct stream *s)
{
	if (!s->f || s->used <= PKT_HDR)
		return;
	put32(s->buf, CTF_MAGIC);
	memcpy(s->buf + 4, ctf_uuid, 16);
	put32(s->buf + 20, (uint32_t)(s->used * 8));
	s->buf[24] = (uint8_t)s->count;
	s->buf[25] = (uint8_t)(s->count >> 8);
	put32(s->buf + 26, (uint32_t)(s->used * 8));
	if (fwrite(s->buf, 1, s->used, s->f) != s->used)
		fail(errno, "writing a stream file");
	s->count++; /* wraps at 16 bits, as mirage-trace-viewer expects */
	s->used = PKT_HDR;
}

/* The stream file dom<domid>-<name>, under key (domid, k2). */
static struct stream *stream_get(uint32_t domid, uint64_t k2, const char *name)
{
	int fresh;
	struct stream *s = ttab_put(&W.streams, domid, k2, &fresh);
	char path[4096];

	if (!s || !fresh)
		return s;
	dom_get(domid);
	snprintf(path, sizeof(path), "%s/dom%u-%s", W.dir, domid, name);
	s->buf = malloc(PKT_MAX);
	s->f = s->buf ? fopen(path, "wbx") : NULL;
	if (!s->f) {
		fail(errno, path);
		free(s->buf);
		s->buf = NULL;
	} else {
		/* a packet is one write: the file never ends inside one, even if we are killed */
		setvbuf(s->f, NULL, _IONBF, 0);
	}
	s->used = PKT_HDR;
	return s;
}

/* The stream of a ring (extra: mtrace's own ops beside mirage-profile's). */
static struct stream *ring_stream(uint32_t domid, uint32_t ring, bool extra)
{
	char name[32];

	snprintf(name, sizeof(name), "ring%u%s", ring, extra ? "-mtrace" : "");
	return stream_get(domid, (uint64_t)ring << 1 | extra, name);
}

/* Strings go out as they came, but for bytes that are not UTF-8 ('?', as mtraced
 * does), so babeltrace2 and its Python bindings decode every one. */
static size_t put_str(uint8_t *p, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t o = 0, n;

	while (*s && o < STR_MAX) {
		n = utf8_len(s);
		if (n == 0) {
			p[o++] = '?';
			s++;
		} else if (o + n > STR_MAX) {
			break;
		} else {
			memcpy(p + o, s, n);
			o += n;
			s += n;
		}
	}
	if (*s)
		W.truncated++;
	p[o++] = 0;
	return o;
}

/* babeltrace2 wants a stream's times in order (a clock or a map that steps back is
 * held, counted) and below 2^63 ns. */
static uint64_t in_order(struct stream *s, uint64_t ts)
{
	if (ts > TS_MAX || (s->events && ts < s->last_ts)) {
		W.clamped++;
		if (ts > TS_MAX)
			ts = TS_MAX;
		if (s->events && ts < s->last_ts)
			ts = s->last_ts;
	}
	s->last_ts = ts;
	s->events++;
	return ts;
}

static void put_event(struct stream *s, const uint8_t *ev, size_t n)
{
	if (s->used + n > PKT_MAX)
		flush_packet(s);
	memcpy(s->buf + s->used, ev, n);
	s->used += n;
}

void cat_ctf_event(const Mtrace__EventBatch *b, size_t i, const struct tl_time *at, const char *str)
{
	unsigned op = b->op[i];
	uint8_t ev[EV_MAX], *p = ev;
	struct stream *s;
	uint64_t ts = at->host_ns < 0 ? 0 : (uint64_t)at->host_ns;

	if (!W.open || W.err)
		return;
	if (!mtrace_op_known(op)) {
		W.skipped++; /* an op the metadata (the op table) does not describe */
		return;
	}
	s = ring_stream(b->domid, b->ring, op >= MTRACE_OP_COUNT_MIRAGE);
	if (!s || !s->f)
		return;
	if (at->host_ns < 0) {
		W.clamped++; /* before 1970: no trace of ours is */
		ts = 0;
	}
	put64(p, in_order(s, ts));
	p[8] = (uint8_t)op;
	p += 9;
	/* the layout metadata_event() declares */
	if (op != MTRACE_OP_GC) {
		put64(p, (uint64_t)b->thread[i]);
		p += 8;
	}
	if (mtrace_ops[op].arg) {
		put64(p, (uint64_t)b->arg[i]);
		p += 8;
	}
	if (op == MTRACE_OP_CREATES)
		*p++ = (uint8_t)(i < b->n_type ? b->type[i] : MTRACE_TT_UNKNOWN);
	if (mtrace_ops[op].str)
		p += put_str(p, str);
	put_event(s, ev, (size_t)(p - ev));
}

/*
 * A domain's vCPU intervals (issue 38), in its stream dom<D>-vcpu: each interval a
 * vcpu_interval event at its start, on the host timeline like every event (a time
 * before 1970 is left out), each wake-up a vcpu_wake.
 */
/* The message's intervals and wake-ups in the order they are written: by time, intervals before wake-ups at one time, then by vCPU, then as sent. */
struct vev {
	uint64_t ts;
	uint32_t kind, vcpu; /* kind: 0 interval, 1 wake-up */
	size_t i;
};

static int vev_cmp(const void *a, const void *b)
{
	const struct vev *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->vcpu != y->vcpu)
		return x->vcpu < y->vcpu ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

void cat_ctf_vcpu(const Mtrace__VcpuIntervals *v)
{
	size_t n = v->n_vcpu, k = 0;
	uint8_t ev[9 + 8 * 6 + 1], *p;
	struct stream *s;
	struct vev *o;

	if (!W.open || W.err || v->n_start_ns != n || v->n_dur_ns != n || v->n_state != n ||
	    v->n_running_ns != n || v->n_runnable_ns != n || v->n_blocked_ns != n ||
	    v->n_pcpu != n || v->n_wake_ns != v->n_wake_vcpu)
		return;
	/* the intervals are host times, like every event of the trace (its one clock) */
	if (!(s = stream_get(v->domid, UINT64_MAX, "vcpu")) || !s->f)
		return;
	if (!(o = calloc(n + v->n_wake_vcpu + 1, sizeof(*o))))
		return;
	for (size_t i = 0; i < n; i++)
		if (v->start_ns[i] >= 0)
			o[k++] = (struct vev){ (uint64_t)v->start_ns[i], 0, v->vcpu[i], i };
	for (size_t i = 0; i < v->n_wake_vcpu; i++)
		if (v->wake_ns[i] >= 0)
			o[k++] = (struct vev){ (uint64_t)v->wake_ns[i], 1, v->wake_vcpu[i], i };
	qsort(o, k, sizeof(*o), vev_cmp);
	for (size_t j = 0; j < k; j++) {
		size_t i = o[j].i;
		put64(ev, in_order(s, o[j].ts));
		put64(ev + 9, o[j].vcpu);
		if (o[j].kind) {
			ev[8] = EV_VCPU_WAKE;
			put_event(s, ev, 17);
			continue;
		}
		ev[8] = EV_VCPU_INTERVAL;
		p = ev + 17;
		*p++ = (uint8_t)(v->state[i] < 5 ? v->state[i] : 4);
		put64(p, v->dur_ns[i]);
		put64(p + 8, (uint64_t)(int64_t)v->pcpu[i]);
		put64(p + 16, v->running_ns[i]);
		put64(p + 24, v->runnable_ns[i]);
		put64(p + 32, v->blocked_ns[i]);
		put_event(s, ev, (size_t)(p + 40 - ev));
	}
	free(o);
}

static const char *source_name(const struct dom *d)
{
	if (!d->maps)
		return "none";
	switch (d->source) {
	case MTRACE__CLOCK_MAP__SOURCE__SAME_KERNEL:
		return "same-kernel";
	case MTRACE__CLOCK_MAP__SOURCE__XEN_SYSTEM_TIME:
		return "xen-system-time";
	default:
		return "unknown";
	}
}

/* Its events are on the host timeline: a known map, or none and a realtime clock (a
 * recording from before maps, whose guest time is already the epoch's). */
static bool on_timeline(const struct dom *d)
{
	return d->maps ? d->source != MTRACE__CLOCK_MAP__SOURCE__UNKNOWN
	               : d->clock == MTRACE_CLOCK_REALTIME;
}

struct env_walk {
	FILE *f;
	size_t n;
	uint32_t domid;
	const struct dom *one;
	bool realtime;
};

static void env_dom(void *payload, void *arg)
{
	struct env_walk *w = arg;
	const struct dom *d = payload;
	uint32_t domid = (uint32_t)ttab_entry_of(payload)->k1;

	fprintf(w->f, "\tdomain_%u = \"%s\";\n\tclock_%u = \"%s\";\n", domid, d->name, domid,
	    ctf_clock_name(d->clock));
	/* strings: exact whatever a reader's integers are */
	fprintf(w->f,
	    "\tclock_source_%u = \"%s\";\n\tclock_offset_%u = \"%" PRId64
	    "\";\n\tclock_uncertainty_%u = \"%" PRIu64 "\";\n\tclock_maps_%u = %" PRIu64 ";\n",
	    domid, source_name(d), domid, d->maps ? d->offset_ns : 0, domid,
	    d->maps && on_timeline(d) ? d->uncertainty_ns : UINT64_MAX, domid, d->maps);
	w->n++;
	w->domid = domid;
	w->one = d;
	w->realtime = w->n == 1 ? on_timeline(d) : w->realtime && on_timeline(d);
}

static void close_stream(void *payload, void *arg)
{
	struct stream *s = payload;

	(void)arg;
	flush_packet(s);
	if (s->f && fclose(s->f) != 0)
		fail(errno, "closing a stream file");
	s->f = NULL;
	free(s->buf);
	s->buf = NULL;
}

/*
 * The metadata, replaced whole (written aside, then renamed): at the start, whenever a
 * domain comes or the daemon is known, and at the end, so that a capture killed even
 * with SIGKILL has metadata for every whole packet it wrote.
 */
static void write_metadata(void)
{
	char path[4096], tmp[4096];
	struct env_walk w = { 0 };
	FILE *f;

	snprintf(path, sizeof(path), "%s/metadata", W.dir);
	snprintf(tmp, sizeof(tmp), "%s/.metadata.new", W.dir);
	f = fopen(tmp, "w");
	if (!f) {
		fail(errno, tmp);
		return;
	}
	ctf_tsdl_head(f);
	fputs("env {\n\ttracer_name = \"mtrace\";\n", f);
	fprintf(f, "\ttracer_version = \"%s\";\n", MTRACE_VERSION);
	if (*W.host)
		fprintf(f, "\thostname = \"%s\";\n", W.host);
	if (*W.software)
		fprintf(f, "\tdaemon = \"%s\";\n", W.software);
	w.f = f;
	ttab_each(&W.doms, env_dom, &w);
	fprintf(f, "\tdomains = %zu;\n", w.n);
	if (w.n == 1)
		fprintf(f, "\tdomid = %u;\n\tdomain = \"%s\";\n\ttrace_clock = \"%s\";\n", w.domid,
		    w.one->name, ctf_clock_name(w.one->clock));
	fputs("};\n\n", f);
	/* One clock class (one stream class in this layout): the host timeline, ns since
	 * the epoch; each domain's map is in env.clock_*_<domid>.  Absolute when every
	 * domain is on it. */
	fprintf(f,
	    "clock {\n\tname = host;\n\tdescription = \"the host timeline: dom0's "
	    "CLOCK_REALTIME, ns (each domain's guest clock + env.clock_offset_<domid>)\";\n"
	    "\tfreq = 1000000000;\n\tprecision = 1;\n"
	    "\toffset_s = 0;\n\toffset = 0;\n\tabsolute = %s;\n};\n\n",
	    w.n && w.realtime ? "true" : "false");
	ctf_tsdl_types(f);
	ctf_tsdl_events(f);
	if (ferror(f))
		fail(EIO, tmp);
	if (fclose(f) != 0)
		fail(errno, tmp);
	else if (rename(tmp, path) != 0)
		fail(errno, path);
}

int cat_ctf_close(char *err, size_t errlen)
{
	if (!W.open)
		return 0;
	ttab_each(&W.streams, close_stream, NULL);
	write_metadata();
	ttab_free(&W.streams, NULL);
	ttab_free(&W.doms, NULL);
	W.open = false;
	if (W.skipped)
		fprintf(stderr,
		    "mtrace-cat: %" PRIu64 " events of ops CTF has no type for were "
		    "not written\n",
		    W.skipped);
	if (W.truncated)
		fprintf(stderr, "mtrace-cat: %" PRIu64 " strings longer than %u bytes were cut\n",
		    W.truncated, STR_MAX);
	if (W.clamped)
		fprintf(stderr,
		    "mtrace-cat: %" PRIu64 " CTF times held (a clock or a map stepping back)\n",
		    W.clamped);
	W.skipped = W.truncated = W.clamped = 0;
	if (W.err) {
		snprintf(err, errlen, "CTF output: %.300s: %s", W.err_what, strerror(W.err));
		return -1;
	}
	return 0;
}
