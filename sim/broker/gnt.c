/*
 * gnt.c - simulated grant tables.
 *
 * A share is one sealed memfd (its size can never change, so nobody holding it can
 * SIGBUS the others); each page of it is one grant entry in the granter's table.
 * Mapping hands out the memfd itself for writable maps and a read-only reopen of it for
 * read-only maps, so the kernel, not the client library, enforces the granted rights.
 * Revoking only removes the entry: like Xen, a mapping that already exists stays
 * valid, also after the granter died.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "broker.h"

struct gshare {
	int fd;        /* read-write */
	int rofd;      /* read-only reopen, made on first read-only map */
	uint32_t live; /* grant entries still pointing here */
};

struct gnt_maps { /* pages a connection has mapped from one domain */
	struct gnt_maps *next;
	uint32_t granter;
	unsigned long pages;
};

struct grant {
	struct gshare *sh;
	uint32_t page;
	uint32_t grantee;
	bool writable;
	struct conn *owner; /* the connection that shared it */
};

static void put_share(struct gshare *sh)
{
	if (--sh->live)
		return;
	close(sh->fd);
	if (sh->rofd >= 0)
		close(sh->rofd);
	free(sh);
}

static void gnt_revoke(struct domain *d, uint32_t ref)
{
	struct grant *g = d->gt[ref];
	d->gt[ref] = NULL;
	d->ngrants--;
	put_share(g->sh);
	free(g);
}

static int alloc_ref(struct domain *d, uint32_t *ref)
{
	if (d->gt_next < GNT_FIRST_REF)
		d->gt_next = GNT_FIRST_REF;
	for (uint32_t i = 0; i < GNT_MAX_REFS - GNT_FIRST_REF; i++) {
		uint32_t r = d->gt_next + i;
		if (r >= GNT_MAX_REFS)
			r -= GNT_MAX_REFS - GNT_FIRST_REF;
		if (r >= d->gt_cap) {
			uint32_t cap = d->gt_cap ? d->gt_cap : 64;
			while (cap <= r)
				cap *= 2;
			if (cap > GNT_MAX_REFS)
				cap = GNT_MAX_REFS;
			struct grant **n = realloc(d->gt, cap * sizeof(*n));
			if (!n)
				return ENOMEM;
			memset(n + d->gt_cap, 0, (cap - d->gt_cap) * sizeof(*n));
			d->gt = n;
			d->gt_cap = cap;
		}
		if (!d->gt[r]) {
			*ref = r;
			d->gt_next = r + 1;
			return 0;
		}
	}
	return ENOSPC;
}

int gnt_share(struct broker *b, struct conn *c, uint32_t grantee, uint32_t count, bool writable,
    uint32_t *refs, int *fd)
{
	struct domain *d = conn_domain(c);
	if (!d)
		return ESRCH;
	if (grantee > MAX_DOMID || count == 0)
		return EINVAL;
	if (count > GNT_MAX_REFS - GNT_FIRST_REF - d->ngrants)
		return ENOSPC; /* gntalloc's answer when the limit is reached */
	struct gshare *sh = calloc(1, sizeof(*sh));
	if (!sh)
		return ENOMEM;
	sh->rofd = -1;
	sh->fd = memfd_create("mtrace-sim-grant", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (sh->fd < 0) {
		free(sh);
		return ENOMEM;
	}
	if (ftruncate(sh->fd, (off_t)count * SIMXEN_PAGE) < 0 ||
	    fcntl(sh->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		int e = errno;
		close(sh->fd);
		free(sh);
		return e == ENOSPC ? ENOMEM : e;
	}
	uint32_t i;
	int err = 0;
	for (i = 0; i < count; i++) {
		struct grant *g = calloc(1, sizeof(*g));
		if (!g || (err = alloc_ref(d, &refs[i]))) {
			free(g);
			err = err ? err : ENOMEM;
			break;
		}
		*g = (struct grant){
			.sh = sh, .page = i, .grantee = grantee, .writable = writable, .owner = c
		};
		d->gt[refs[i]] = g;
		d->ngrants++;
		sh->live++;
	}
	if (err) {
		sh->live++; /* keep sh alive while unwinding */
		while (i--)
			gnt_revoke(d, refs[i]);
		put_share(sh);
		return err;
	}
	*fd = fcntl(sh->fd, F_DUPFD_CLOEXEC, 0);
	if (*fd < 0) {
		int e = errno;
		sh->live++;
		for (i = 0; i < count; i++)
			gnt_revoke(d, refs[i]);
		put_share(sh);
		return e;
	}
	return 0;
}

int gnt_unshare(struct broker *b, struct conn *c, const uint32_t *refs, uint32_t count)
{
	struct domain *d = conn_domain(c);
	if (!d)
		return ESRCH;
	/* All or nothing: check every ref before revoking any. */
	for (uint32_t i = 0; i < count; i++)
		if (refs[i] >= d->gt_cap || !d->gt[refs[i]] || d->gt[refs[i]]->owner != c)
			return EINVAL;
	for (uint32_t i = 0; i < count; i++)
		if (d->gt[refs[i]]) /* a ref listed twice */
			gnt_revoke(d, refs[i]);
	return 0;
}

static int ro_fd(struct gshare *sh)
{
	if (sh->rofd < 0) {
		char p[64];
		snprintf(p, sizeof(p), "/proc/self/fd/%d", sh->fd);
		sh->rofd = open(p, O_RDONLY | O_CLOEXEC);
	}
	return sh->rofd;
}

int gnt_map(struct broker *b, struct conn *c, uint32_t granter, uint32_t count, int prot,
    const uint32_t *refs, struct simxen_map_ent *ent, int *fds, unsigned *nfds)
{
	*nfds = 0;
	if (prot != PROT_READ && prot != (PROT_READ | PROT_WRITE))
		return EINVAL;
	/* gntdev turns every failed GNTTABOP_map_grant_ref (bad domain, bad ref, not the
	 * grantee, read-only grant mapped writable) into EINVAL from mmap. */
	struct domain *d = dom_get(b, granter);
	if (!d || d->state == DOM_DYING)
		return EINVAL;
	uint32_t me = conn_domid(c);
	for (uint32_t i = 0; i < count; i++) {
		struct grant *g = refs[i] < d->gt_cap ? d->gt[refs[i]] : NULL;
		if (!g || g->grantee != me || ((prot & PROT_WRITE) && !g->writable))
			return EINVAL;
		int fd = (prot & PROT_WRITE) ? g->sh->fd : ro_fd(g->sh);
		if (fd < 0)
			return ENOMEM;
		unsigned k;
		for (k = 0; k < *nfds && fds[k] != fd; k++)
			;
		if (k == *nfds) {
			if (*nfds == SIMXEN_MAX_FDS)
				return E2BIG;
			fds[(*nfds)++] = fd;
		}
		ent[i] = (struct simxen_map_ent){ .fd_index = k, .page = g->page };
	}
	/* Counted so that a destroyed domain stays dying while mapped, as on Xen. */
	struct gnt_maps *m;
	for (m = *conn_maps(c); m && m->granter != granter; m = m->next)
		;
	if (!m) {
		if (!(m = calloc(1, sizeof(*m))))
			return ENOMEM;
		m->granter = granter;
		m->next = *conn_maps(c);
		*conn_maps(c) = m;
	}
	m->pages += count;
	d->foreign_maps += count;
	return 0;
}

static void drop_maps(struct broker *b, uint32_t granter, unsigned long pages)
{
	struct domain *d = dom_get(b, granter);
	if (!d)
		return;
	d->foreign_maps -= pages < d->foreign_maps ? pages : d->foreign_maps;
	if (d->released && !d->foreign_maps)
		b->collect_due = true; /* dom_collect finishes it after the request */
}

int gnt_unmap(struct broker *b, struct conn *c, uint32_t granter, uint32_t count)
{
	struct gnt_maps **pp;
	for (pp = conn_maps(c); *pp && (*pp)->granter != granter; pp = &(*pp)->next)
		;
	if (!*pp || (*pp)->pages < count)
		return EINVAL;
	struct gnt_maps *m = *pp;
	m->pages -= count;
	if (!m->pages) {
		*pp = m->next;
		free(m);
	}
	drop_maps(b, granter, count);
	return 0;
}

void gnt_conn_gone(struct broker *b, struct conn *c)
{
	/* The process is gone or closed its handle: its mappings count no more. */
	while (*conn_maps(c)) {
		struct gnt_maps *m = *conn_maps(c);
		*conn_maps(c) = m->next;
		drop_maps(b, m->granter, m->pages);
		free(m);
	}
	struct domain *d = conn_domain(c);
	if (!d)
		return;
	for (uint32_t r = 0; r < d->gt_cap; r++)
		if (d->gt[r] && d->gt[r]->owner == c)
			gnt_revoke(d, r);
}

void gnt_domain_gone(struct domain *d)
{
	for (uint32_t r = 0; r < d->gt_cap; r++)
		if (d->gt[r])
			gnt_revoke(d, r);
	free(d->gt);
	d->gt = NULL;
	d->gt_cap = 0;
}
