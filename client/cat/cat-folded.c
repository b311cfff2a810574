/*
 * cat-folded.c - mtrace-cat -f folded: the creation tree as folded stacks, the input
 * of flamegraph.pl, inferno-flamegraph and speedscope.  Each thread is one stack, the
 * frames the path from its root ancestor to it, each frame a thread's label or its
 * creation site; equal stacks are summed.  The weight of a stack is its threads'
 * count (default) or their time pending or running, so a frame's width is the total
 * over its subtree: with time weights, parallel children may add up to more than
 * their parent's own time (ten 1 s sleeps under a 1 s parent weigh 10 s).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cat-folded.h"
#include "mtrace-ring.h"
#include "ops.h"
#include "thread-table.h"
#include "xalloc.h"

#define THREADS_MAX (1u << 22) /* threads remembered; more are counted */
#define LABEL_KEEP  128
#define DEPTH_MAX   256
#define STACK_MAX   8192
#define SITES_MAX   (1u << 16)

struct fthr {
	uint32_t domid;
	uint64_t id;
	uint64_t parent; /* MTRACE_THREAD_NONE: a root */
	uint64_t created, resolved, running;
	uint64_t site;
	char *label;
	uint8_t type, has_site, site_kind;
};

struct fsite {
	uint32_t domid;
	uint8_t named;
	uint64_t value;
	char *name;
};

struct fstack {
	char *path;
	uint64_t weight;
};

static struct {
	enum folded_frames frames;
	enum folded_weight weight;
	struct ttab threads; /* (domid, id) -> struct fthr */
	uint64_t dropped;
	struct fsite *sites;
	uint32_t nsites;
	struct fstack *st;
	size_t nst, capst;
	/* running thread per domain (the last one seen), for the running weight */
	uint32_t run_dom;
	uint64_t run_id, run_start, last_ts;
} F;

void folded_init(enum folded_frames frames, enum folded_weight weight)
{
	memset(&F, 0, sizeof(F));
	F.frames = frames;
	F.weight = weight;
	F.run_id = MTRACE_THREAD_NONE;
	ttab_init(&F.threads, sizeof(struct fthr));
}

static struct fthr *find(uint32_t domid, uint64_t id)
{
	return ttab_get(&F.threads, domid, id);
}

static struct fthr *get(uint32_t domid, uint64_t id, uint64_t ts)
{
	struct fthr *t = find(domid, id);
	int fresh = 0;

	if (t)
		return t;
	if (F.threads.n >= THREADS_MAX || !(t = ttab_put(&F.threads, domid, id, &fresh))) {
		F.dropped++;
		return NULL;
	}
	t->domid = domid;
	t->id = id;
	t->parent = MTRACE_THREAD_NONE;
	t->created = ts;
	t->type = MTRACE_TT_UNKNOWN;
	return t;
}

static const char *site_name(uint32_t domid, uint8_t kind, uint64_t value)
{
	for (uint32_t i = 0; i < F.nsites; i++)
		if (F.sites[i].domid == domid && F.sites[i].value == value &&
		    F.sites[i].named == (kind == MTRACE_SITE_NAMED))
			return F.sites[i].name;
	return NULL;
}

void folded_stats(const Mtrace__Stats *s)
{
	for (size_t i = 0; i < s->n_sites; i++) {
		const Mtrace__SiteStats *x = s->sites[i];
		struct fsite *fs = NULL;

		for (uint32_t k = 0; k < F.nsites; k++)
			if (F.sites[k].domid == x->domid && F.sites[k].value == x->address &&
			    F.sites[k].named == x->named)
				fs = &F.sites[k];
		if (!fs) {
			if (F.nsites == SITES_MAX)
				continue;
			if (!(F.nsites & (F.nsites - 1)) || !F.nsites)
				F.sites = xreallocarray(
				    F.sites, F.nsites ? F.nsites * 2 : 16, sizeof(*F.sites));
			fs = &F.sites[F.nsites++];
			fs->domid = x->domid;
			fs->named = x->named;
			fs->value = x->address;
			fs->name = NULL;
		}
		free(fs->name);
		fs->name = xstrdup(x->site);
	}
}

/*
 * One frame, made safe for the format (';' separates frames, a line is a stack) and
 * for flamegraph.pl: it quotes a frame into a JavaScript string of the SVG by putting
 * a backslash before each quote, so a guest's backslash would end that string.
 */
static void frame_append(char *buf, size_t *len, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p && *len < STACK_MAX - 2; p++) {
		unsigned char c = *p;
		buf[(*len)++] = c == ';'      ? ':'
		    : c == '\\'               ? '/'
		    : (c < 0x20 || c == 0x7f) ? '?'
		                              : (char)c;
	}
}

static void frame_of(const struct fthr *t, char *buf, size_t *len)
{
	const char *site = t->has_site ? site_name(t->domid, t->site_kind, t->site) : NULL;
	char raw[64];

	if (t->has_site && !site) {
		snprintf(raw, sizeof(raw),
		    t->site_kind == MTRACE_SITE_NAMED ? "site#%" PRIu64 : "0x%" PRIx64, t->site);
		site = raw;
	}
	if (F.frames != FOLDED_SITE && t->label) {
		frame_append(buf, len, t->label);
	} else if (F.frames != FOLDED_LABEL && site) {
		if (F.frames == FOLDED_AUTO)
			frame_append(buf, len, "@"); /* an automatic label: the site */
		frame_append(buf, len, site);
	} else {
		frame_append(buf, len, "(");
		frame_append(buf, len, mtrace_thread_type_name(t->type));
		frame_append(buf, len, ")");
	}
}

static uint64_t weight_of(const struct fthr *t)
{
	uint64_t end;

	switch (F.weight) {
	case FOLDED_PENDING:
		end = t->resolved ? t->resolved : F.last_ts;
		return end > t->created ? end - t->created : 0;
	case FOLDED_RUNNING:
		return t->running +
		    (t->id == F.run_id && t->domid == F.run_dom && F.last_ts > F.run_start
		            ? F.last_ts - F.run_start
		            : 0);
	default:
		return 1;
	}
}

static int stack_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fstack *)a)->path, ((const struct fstack *)b)->path);
}

/* Add thread t's stack to the output (its path is built from the ancestors known now). */
static void emit(const struct fthr *t)
{
	const struct fthr *chain[DEPTH_MAX];
	unsigned depth = 0;
	char buf[STACK_MAX];
	size_t len = 0;
	uint64_t w = weight_of(t);

	for (const struct fthr *a = t; a && depth < DEPTH_MAX; depth++) {
		chain[depth] = a;
		a = a->parent != MTRACE_THREAD_NONE ? find(a->domid, a->parent) : NULL;
		for (unsigned k = 0; a && k <= depth; k++)
			if (chain[k] == a)
				a = NULL; /* a cycle (reused ids): stop */
	}
	while (depth--) {
		frame_of(chain[depth], buf, &len);
		if (depth)
			buf[len++] = ';';
	}
	buf[len] = 0;
	if (F.nst == F.capst) {
		F.capst = F.capst ? F.capst * 2 : 1024;
		F.st = xreallocarray(F.st, F.capst, sizeof(*F.st));
	}
	F.st[F.nst].path = xstrdup(buf);
	F.st[F.nst++].weight = w;
}

static void emit_each(void *payload, void *arg)
{
	(void)arg;
	emit(payload);
}

static void free_thread(void *payload)
{
	free(((struct fthr *)payload)->label);
}

static void run_to(uint32_t domid, uint64_t id, uint64_t ts)
{
	if (F.run_dom == domid && F.run_id == id)
		return;
	if (F.run_id != MTRACE_THREAD_NONE && ts > F.run_start) {
		struct fthr *r = find(F.run_dom, F.run_id);
		if (r)
			r->running += ts - F.run_start;
	}
	F.run_dom = domid;
	F.run_id = id;
	F.run_start = ts;
}

void folded_event(uint32_t domid, uint8_t op, uint8_t type, uint64_t ts, int64_t thread_s,
    int64_t arg_s, const char *str)
{
	uint64_t thread = (uint64_t)thread_s, arg = (uint64_t)arg_s;
	struct fthr *t = NULL, *c;

	if (ts > F.last_ts)
		F.last_ts = ts;
	if (op == MTRACE_OP_GC || op == MTRACE_OP_RING_START || op == MTRACE_OP_SITE_NAME ||
	    op == MTRACE_OP_MODULE)
		return;
	if (op == MTRACE_OP_SITE) {
		c = find(domid, thread);
		if (c && !c->has_site && type <= MTRACE_SITE_NAMED) {
			c->has_site = 1;
			c->site_kind = type;
			c->site = arg;
		}
		return;
	}
	if (thread != MTRACE_THREAD_NONE)
		t = get(domid, thread, ts);
	switch (op) {
	case MTRACE_OP_CREATES:
		if (arg == MTRACE_THREAD_NONE || arg == thread)
			break;
		c = find(domid, arg);
		if (c) {
			/* an id reused: the old thread is complete, count it now */
			emit(c);
			ttab_del(&F.threads, domid, arg, free_thread);
		}
		c = get(domid, arg, ts);
		if (c) {
			c->parent = thread;
			c->type = type;
		}
		break;
	case MTRACE_OP_FULFILLS:
	case MTRACE_OP_FAILS:
		if (arg != MTRACE_THREAD_NONE && (c = get(domid, arg, ts)) && !c->resolved)
			c->resolved = ts;
		break;
	case MTRACE_OP_LABEL:
		if (t && str) {
			free(t->label);
			t->label = strndup(str, LABEL_KEEP);
		}
		break;
	case MTRACE_OP_SIGNAL:
	case MTRACE_OP_SIGNAL_NEW:
		if (arg != MTRACE_THREAD_NONE)
			get(domid, arg, ts);
		if (op == MTRACE_OP_SIGNAL && thread != MTRACE_THREAD_NONE)
			run_to(domid, thread, ts);
		break;
	case MTRACE_OP_READ:
	case MTRACE_OP_SWITCH:
		if (thread != MTRACE_THREAD_NONE)
			run_to(domid, thread, ts);
		break;
	default:
		break;
	}
}

void folded_print(FILE *f)
{
	size_t k = 0;

	ttab_each(&F.threads, emit_each, NULL);
	qsort(F.st, F.nst, sizeof(*F.st), stack_cmp);
	for (size_t i = 0; i < F.nst; i = k) {
		uint64_t w = 0;
		for (k = i; k < F.nst && !strcmp(F.st[k].path, F.st[i].path); k++)
			w += F.st[k].weight;
		fprintf(f, "%s %" PRIu64 "\n", F.st[i].path, w);
	}
	if (F.dropped)
		fprintf(stderr, "mtrace-cat: %" PRIu64 " threads past the folded table's cap\n",
		    F.dropped);
	for (size_t i = 0; i < F.nst; i++)
		free(F.st[i].path);
	free(F.st);
	ttab_free(&F.threads, free_thread);
	for (uint32_t i = 0; i < F.nsites; i++)
		free(F.sites[i].name);
	free(F.sites);
	memset(&F, 0, sizeof(F));
}
