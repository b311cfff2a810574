/*
 * ring-harness.c - what test-ring's cases share: ring memory between PROT_NONE guard
 * pages, the events a drain collected (strings copied out), and events derived from
 * their sequence numbers.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "check.h"
#include "mtrace-guest.h"
#include "ring-reader.h"
#include "ring-test.h"

void mem_init(struct mem *m, uint32_t pages)
{
	size_t len = (size_t)(pages + 3) * MTRACE_PAGE_SIZE;
	uint8_t *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	REQUIRE(p != MAP_FAILED, "mmap: %s", strerror(errno));
	/* [guard][hdr][data...][guard] */
	REQUIRE(mprotect(p + MTRACE_PAGE_SIZE, (size_t)(pages + 1) * MTRACE_PAGE_SIZE,
	            PROT_READ | PROT_WRITE) == 0,
	    "mprotect");
	m->map = p;
	m->maplen = len;
	m->hdr = (struct mtrace_ring_hdr *)(p + MTRACE_PAGE_SIZE);
	m->data = p + 2 * MTRACE_PAGE_SIZE;
	m->pages = pages;
}

void mem_free(struct mem *m)
{
	munmap(m->map, m->maplen);
}

void collect(const struct mtrace_event *e, void *arg)
{
	struct coll *c = arg;

	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 256;
		c->v = realloc(c->v, c->cap * sizeof(*c->v));
		REQUIRE(c->v != NULL, "realloc");
	}
	c->v[c->n].e = *e;
	if (e->str != NULL)
		REQUIRE(e->str[e->str_len] == 0, "string not terminated");
	c->v[c->n].str = strndup(e->str != NULL ? e->str : "", e->str_len);
	REQUIRE(c->v[c->n].str != NULL, "strndup");
	c->v[c->n].e.str = NULL;
	c->n++;
}

void coll_reset(struct coll *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].str);
	c->n = 0;
}

void coll_free(struct coll *c)
{
	coll_reset(c);
	free(c->v);
}

size_t drain_all(struct ring_reader *rd, struct coll *c)
{
	size_t n = 0;
	bool more = true;

	for (int i = 0; more && i < 1000000; i++)
		n += ring_reader_drain(rd, 1000, collect, c, &more);
	return n;
}

struct ring_reader *attach(struct mem *m)
{
	char err[128];
	struct mtrace_ring_hdr h;
	struct ring_reader *rd = NULL;

	if (ring_hdr_copy(m->hdr, m->pages, &h, NULL, err, sizeof(err)) == 0)
		rd = ring_reader_attach_copy(m->hdr, &h, m->data, m->pages, err, sizeof(err));
	REQUIRE(rd != NULL, "attach: %s", err);
	return rd;
}

/* A deterministic event derived from its sequence number (contents checkable). */
void emit_seq(struct mtrace_ring *r, uint32_t seq)
{
	char s[64];

	switch (seq % 7) {
	case 3:
		snprintf(s, sizeof(s), "label-%" PRIu32 "%.*s", seq, (int)(seq % 29),
		    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
		mtrace_emit_slow(
		    r, MTRACE_OP_LABEL, 0, seq * 3ull, seq ^ 0x5555ull, 0, s, strlen(s));
		break;
	default:
		mtrace_emit_ts(r, (uint8_t)(seq % 5 == 0 ? MTRACE_OP_SWITCH : MTRACE_OP_READ),
		    (uint8_t)(seq % 20), seq * 3ull, seq ^ 0x5555ull, seq * 7ull);
	}
}

bool check_seq_event(const struct mtrace_event *e, const char *str)
{
	uint32_t seq = e->seq;
	char s[64];

	if (e->ts != seq * 3ull || e->thread != (seq ^ 0x5555ull))
		return false;
	if (seq % 7 == 3) {
		snprintf(s, sizeof(s), "label-%" PRIu32 "%.*s", seq, (int)(seq % 29),
		    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
		return e->op == MTRACE_OP_LABEL && e->arg == 0 && str != NULL &&
		    e->str_len == strlen(s) && strcmp(str, s) == 0;
	}
	return e->op == (seq % 5 == 0 ? MTRACE_OP_SWITCH : MTRACE_OP_READ) && e->type == seq % 20 &&
	    e->arg == seq * 7ull && e->str == NULL;
}
