/*
 * thread-table.c - chained hash of (domain, thread) keys; grows at load 1.
 */
#include <stdlib.h>
#include <string.h>

#include "thread-table.h"

#define PAYLOAD(e) ((void *)((e) + 1))

static size_t slot(const struct ttab *t, uint64_t k1, uint64_t k2)
{
	uint64_t h = (k1 * 0x9e3779b97f4a7c15ull) ^ (k2 * 0xbf58476d1ce4e5b9ull);

	h ^= h >> 29;
	return (size_t)(h & (t->nb - 1));
}

void ttab_init(struct ttab *t, size_t size)
{
	memset(t, 0, sizeof(*t));
	t->size = size;
}

void ttab_free(struct ttab *t, void (*fn)(void *payload))
{
	for (size_t i = 0; i < t->nb; i++) {
		struct ttab_entry *e = t->b[i], *n;
		for (; e; e = n) {
			n = e->next;
			if (fn)
				fn(PAYLOAD(e));
			free(e);
		}
	}
	free(t->b);
	t->b = NULL;
	t->nb = t->n = 0;
}

void *ttab_get(const struct ttab *t, uint64_t k1, uint64_t k2)
{
	if (!t->nb)
		return NULL;
	for (struct ttab_entry *e = t->b[slot(t, k1, k2)]; e; e = e->next)
		if (e->k1 == k1 && e->k2 == k2)
			return PAYLOAD(e);
	return NULL;
}

static int grow(struct ttab *t)
{
	size_t nb = t->nb ? t->nb * 2 : 256, i;
	struct ttab_entry **b = calloc(nb, sizeof(*b)), *e, *n;
	struct ttab old = *t;

	if (!b)
		return -1;
	t->b = b;
	t->nb = nb;
	for (i = 0; i < old.nb; i++)
		for (e = old.b[i]; e; e = n) {
			size_t s = slot(t, e->k1, e->k2);
			n = e->next;
			e->next = b[s];
			b[s] = e;
		}
	free(old.b);
	return 0;
}

void *ttab_put(struct ttab *t, uint64_t k1, uint64_t k2, int *fresh)
{
	void *p = ttab_get(t, k1, k2);
	struct ttab_entry *e;
	size_t s;

	*fresh = 0;
	if (p)
		return p;
	if (t->n >= t->nb && grow(t) < 0)
		return NULL;
	e = calloc(1, sizeof(*e) + t->size);
	if (!e)
		return NULL;
	e->k1 = k1;
	e->k2 = k2;
	s = slot(t, k1, k2);
	e->next = t->b[s];
	t->b[s] = e;
	t->n++;
	*fresh = 1;
	return PAYLOAD(e);
}

void ttab_del(struct ttab *t, uint64_t k1, uint64_t k2, void (*fn)(void *payload))
{
	struct ttab_entry **pp, *e;

	if (!t->nb)
		return;
	for (pp = &t->b[slot(t, k1, k2)]; (e = *pp); pp = &e->next)
		if (e->k1 == k1 && e->k2 == k2) {
			*pp = e->next;
			if (fn)
				fn(PAYLOAD(e));
			free(e);
			t->n--;
			return;
		}
}

void ttab_each(const struct ttab *t, void (*fn)(void *payload, void *arg), void *arg)
{
	for (size_t i = 0; i < t->nb; i++)
		for (struct ttab_entry *e = t->b[i]; e; e = e->next)
			fn(PAYLOAD(e), arg);
}

const struct ttab_entry *ttab_entry_of(const void *payload)
{
	return (const struct ttab_entry *)payload - 1;
}

int ttab_fifo_push(struct ttab_fifo *q, uint64_t k1, uint64_t k2)
{
	if (q->len == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 1024, i;
		uint64_t(*n)[2] = malloc(cap * sizeof(*n));
		if (!n)
			return -1;
		for (i = 0; i < q->len; i++) {
			n[i][0] = q->k[(q->head + i) % q->cap][0];
			n[i][1] = q->k[(q->head + i) % q->cap][1];
		}
		free(q->k);
		q->k = n;
		q->cap = cap;
		q->head = 0;
	}
	q->k[(q->head + q->len) % q->cap][0] = k1;
	q->k[(q->head + q->len) % q->cap][1] = k2;
	q->len++;
	return 0;
}

int ttab_fifo_pop(struct ttab_fifo *q, uint64_t *k1, uint64_t *k2)
{
	if (!q->len)
		return 0;
	*k1 = q->k[q->head][0];
	*k2 = q->k[q->head][1];
	q->head = (q->head + 1) % q->cap;
	q->len--;
	return 1;
}

void ttab_fifo_free(struct ttab_fifo *q)
{
	free(q->k);
	memset(q, 0, sizeof(*q));
}
