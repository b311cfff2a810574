/*
 * state-labels.c - per-label statistics: how many threads carry a label, how many
 * are still pending, how fast new ones appear (LABEL_WIN one-second buckets) and how
 * long they live (a log-linear histogram, 4 buckets per power of two, so percentiles
 * cost a fixed 1 KB per label whatever the number of threads).
 */
#include <stdbool.h>
#include <string.h>

#include "state-int.h"
#include "state.h"

static uint64_t hist_value(unsigned b)
{
	unsigned msb, sub;
	uint64_t lo, width;

	if (b < 4)
		return b;
	msb = b / 4 + 1;
	sub = b % 4;
	lo = (uint64_t)(4 + sub) << (msb - 2);
	width = (uint64_t)1 << (msb - 2);
	return lo + width / 2;
}

uint64_t state_hist_pct(const struct label *l, double p)
{
	uint64_t want, seen = 0;

	if (!l->nlife)
		return 0;
	want = (uint64_t)(p * (double)l->nlife + 0.999999);
	if (want < 1)
		want = 1;
	for (unsigned b = 0; b < HIST_BUCKETS; b++) {
		seen += l->hist[b];
		if (seen >= want)
			return hist_value(b);
	}
	return hist_value(HIST_BUCKETS - 1);
}

void state_label_roll(struct label *l, uint64_t now_sec)
{
	if (now_sec <= l->cr_sec)
		return;
	for (uint64_t s = l->cr_sec + 1; s <= now_sec && s < l->cr_sec + 1 + LABEL_WIN; s++)
		l->cr[s % LABEL_WIN] = 0;
	l->cr_sec = now_sec;
}

uint32_t state_label_rate_sum(const struct label *l, uint64_t now_sec)
{
	uint32_t sum = 0;

	/* the last LABEL_WIN complete seconds */
	for (uint64_t s = now_sec >= LABEL_WIN ? now_sec - LABEL_WIN : 0; s < now_sec; s++)
		if (s <= l->cr_sec && s + LABEL_WIN > l->cr_sec)
			sum += l->cr[s % LABEL_WIN];
	return sum;
}

/* A thread is labelled by its first label event, whether the label is kept or not
 * (docs/figures.md): a guest past max_labels_per_guest labels threads all the same. */
static inline void thr_labelled(struct state_domain *d, struct thr *t)
{
	if (!t->labelled) {
		t->labelled = 1;
		d->threads_labelled++;
	}
}

/*
 * li: the label interned, NO_IDX when the guest's table is full (max_labels_per_guest
 * distinct labels) and the label is not in it.  Such an event is counted in
 * labels_dropped and leaves the thread's current label as it was; the thread is
 * labelled all the same.
 */
void state_thr_set_label(struct state_domain *d, struct thr *t, uint32_t li, bool added)
{
	struct label *l;

	if (li == NO_IDX) {
		d->labels_dropped++;
		thr_labelled(d, t);
		return;
	}
	if (added) {
		/* grown with the table, not at every new label: a realloc to the same size
		 * copies everything under some allocators (ASan's does) */
		if (d->lstat_cap != d->labels.cap) {
			d->lstat = xreallocarray(d->lstat, d->labels.cap, sizeof(struct label));
			d->lstat_cap = d->labels.cap;
		}
		memset(&d->lstat[li], 0, sizeof(struct label));
		d->lstat[li].cr_sec = state_ctx.cur_sec;
	}
	if (t->label == li)
		return;
	l = &d->lstat[li];
	if (t->label == NO_IDX && !t->has_past) {
		/* a thread's first label, most of them: no history to keep yet (the code
		 * below would find past[] empty and leave it so), and past[] of a reused
		 * slot is a cache miss not taken; labelled already if its labels so far
		 * were dropped */
		thr_labelled(d, t);
		t->label = li;
		l->current++;
		l->relabels++;
		if (t->state == TS_PENDING)
			l->live++;
		l->count++;
		state_label_roll(l, state_ctx.cur_sec);
		l->cr[state_ctx.cur_sec % LABEL_WIN]++;
		return;
	}
	if (t->state == TS_PENDING)
		label_unlive(d, t);
	/* current: the thread moves from its old label, if it has one, to this one */
	thr_labelled(d, t);
	if (t->label != NO_IDX && d->lstat[t->label].current)
		d->lstat[t->label].current--;
	d->lstat[li].current++;
	/* Counted once per thread: a thread toggling between two labels is one thread of
	 * each.  It remembers LABEL_PAST earlier labels; one cycling through more is
	 * counted again when it comes back to a label it has forgotten. */
	struct thr_past *pa = &d->past[t - d->thr];
	bool seen = false;
	unsigned k;
	if (!t->has_past) {
		for (k = 0; k < LABEL_PAST; k++)
			pa->l[k] = NO_IDX;
		t->has_past = 1;
	}
	for (k = 0; k < LABEL_PAST && pa->l[k] != NO_IDX; k++)
		if (pa->l[k] == li) {
			seen = true;
			break;
		}
	if (k == LABEL_PAST)
		k = LABEL_PAST - 1; /* forget the oldest */
	if (t->label != NO_IDX) {
		/* the previous label to the front of past[], over li's old place if any */
		memmove(&pa->l[1], &pa->l[0], k * sizeof(pa->l[0]));
		pa->l[0] = t->label;
	} else if (seen) {
		memmove(&pa->l[k], &pa->l[k + 1], (LABEL_PAST - 1 - k) * sizeof(pa->l[0]));
		pa->l[LABEL_PAST - 1] = NO_IDX;
	}
	t->label = li;
	l = &d->lstat[li];
	l->relabels++;
	if (t->state == TS_PENDING)
		l->live++;
	if (seen)
		return;
	l->count++;
	state_label_roll(l, state_ctx.cur_sec);
	l->cr[state_ctx.cur_sec % LABEL_WIN]++;
}
