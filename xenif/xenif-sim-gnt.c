/*
 * xenif-sim-gnt.c - the simulated backend's grant tables: maps and shares.
 *
 * Grants arrive from the broker as file descriptors and are mmap'd here, so mapped
 * pages are real shared memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "xenif-sim-int.h"

#define MAX_SHARE 1024 /* pages per share call: refs must fit one reply */
#define MAX_MAP   65536

void *xenif_sim_gnttab_map(
    struct xenif *x, xenif_domid_t domid, uint32_t count, const xenif_gref_t *refs, int prot)
{
	struct sim *s = xenif_sim(x);
	if (count == 0 || count > MAX_MAP || !refs ||
	    (prot != PROT_READ && prot != (PROT_READ | PROT_WRITE))) {
		errno = EINVAL;
		return NULL;
	}
	struct region *rg = calloc(1, sizeof(*rg));
	if (!rg)
		return NULL;
	/* Reserve the whole range first: the refs must end up contiguous, as with gntdev. */
	uint8_t *base =
	    mmap(NULL, (size_t)count * SIMXEN_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		free(rg);
		return NULL;
	}
	uint32_t done = 0;
	while (done < count) {
		uint32_t n = count - done < SIMXEN_MAP_CHUNK ? count - done : SIMXEN_MAP_CHUNK;
		struct simxen_req req = { .op = SIMXEN_GNT_MAP, .a = { domid, n, (uint32_t)prot } };
		struct simxen_rep rep;
		struct simxen_map_ent ent[SIMXEN_MAP_CHUNK];
		int fds[SIMXEN_MAX_FDS];
		unsigned nfds;
		size_t len;
		if (xenif_sim_rpc(s, &req, refs + done, n * sizeof(*refs), &rep, ent, sizeof(ent),
		        &len, fds, SIMXEN_MAX_FDS, &nfds) < 0)
			goto fail;
		int err = 0;
		if (len != n * sizeof(ent[0]))
			err = EPROTO;
		for (uint32_t i = 0; i < n && !err; i++) {
			if (ent[i].fd_index >= nfds) {
				err = EPROTO;
				break;
			}
			void *p = mmap(base + (size_t)(done + i) * SIMXEN_PAGE, SIMXEN_PAGE, prot,
			    MAP_SHARED | MAP_FIXED, fds[ent[i].fd_index],
			    (off_t)ent[i].page * SIMXEN_PAGE);
			if (p == MAP_FAILED)
				err = errno;
		}
		xenif_sim_close_fds(fds, nfds);
		done += n;
		if (err) {
			errno = err;
			goto fail;
		}
	}
	rg->addr = base;
	rg->count = count;
	rg->domid = domid;
	pthread_mutex_lock(&s->lock);
	rg->next = s->maps;
	s->maps = rg;
	pthread_mutex_unlock(&s->lock);
	return base;
fail:;
	int e = errno;
	munmap(base, (size_t)count * SIMXEN_PAGE);
	if (done) { /* the broker counted the chunks that worked */
		struct simxen_req un = { .op = SIMXEN_GNT_UNMAP, .a = { domid, done } };
		struct simxen_rep rep;
		xenif_sim_rpc(s, &un, NULL, 0, &rep, NULL, 0, NULL, NULL, 0, NULL);
	}
	free(rg);
	errno = e;
	return NULL;
}

/* Unlink the region at addr/count from a list; NULL (EINVAL) if this handle did not make it. */
static struct region *take_region(struct sim *s, struct region **list, void *addr, uint32_t count)
{
	pthread_mutex_lock(&s->lock);
	for (struct region **p = list; *p; p = &(*p)->next) {
		if ((*p)->addr == addr && (*p)->count == count) {
			struct region *rg = *p;
			*p = rg->next;
			pthread_mutex_unlock(&s->lock);
			return rg;
		}
	}
	pthread_mutex_unlock(&s->lock);
	errno = EINVAL;
	return NULL;
}

int xenif_sim_gnttab_unmap(struct xenif *x, void *addr, uint32_t count)
{
	struct region *rg = take_region(xenif_sim(x), &xenif_sim(x)->maps, addr, count);
	if (!rg)
		return -1;
	munmap(rg->addr, (size_t)rg->count * SIMXEN_PAGE);
	/* Tell the broker: a destroyed granter stays dying until nobody maps it. */
	struct simxen_req req = { .op = SIMXEN_GNT_UNMAP, .a = { rg->domid, rg->count } };
	struct simxen_rep rep;
	xenif_sim_rpc(
	    xenif_sim(x), &req, NULL, 0, &rep, NULL, 0, NULL, NULL, 0, NULL); /* best effort */
	free(rg);
	return 0;
}

void *xenif_sim_gntshr_share(
    struct xenif *x, xenif_domid_t domid, uint32_t count, xenif_gref_t *refs, bool writable)
{
	struct sim *s = xenif_sim(x);
	if (count == 0 || count > MAX_SHARE || !refs) {
		errno = EINVAL;
		return NULL;
	}
	struct region *rg = calloc(1, sizeof(*rg));
	xenif_gref_t *copy = calloc(count, sizeof(*copy));
	if (!rg || !copy) {
		free(rg);
		free(copy);
		errno = ENOMEM;
		return NULL;
	}
	struct simxen_req req = { .op = SIMXEN_GNT_SHARE, .a = { domid, count, writable } };
	struct simxen_rep rep;
	int fd = -1;
	unsigned nfds;
	size_t len;
	if (xenif_sim_rpc(
	        s, &req, NULL, 0, &rep, copy, count * sizeof(*copy), &len, &fd, 1, &nfds) < 0)
		goto fail;
	if (nfds != 1 || len != count * sizeof(*copy)) {
		if (nfds)
			close(fd);
		errno = EPROTO;
		goto fail; /* the grants die with the connection or domain */
	}
	void *p =
	    mmap(NULL, (size_t)count * SIMXEN_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int e = errno;
	close(fd);
	if (p == MAP_FAILED) {
		struct simxen_req un = { .op = SIMXEN_GNT_UNSHARE };
		xenif_sim_rpc(
		    s, &un, copy, count * sizeof(*copy), &rep, NULL, 0, NULL, NULL, 0, NULL);
		errno = e;
		goto fail;
	}
	memcpy(refs, copy, count * sizeof(*copy));
	rg->addr = p;
	rg->count = count;
	rg->refs = copy;
	pthread_mutex_lock(&s->lock);
	rg->next = s->shares;
	s->shares = rg;
	pthread_mutex_unlock(&s->lock);
	return p;
fail:
	e = errno;
	free(rg);
	free(copy);
	errno = e;
	return NULL;
}

int xenif_sim_gntshr_unshare(struct xenif *x, void *addr, uint32_t count)
{
	struct sim *s = xenif_sim(x);
	struct region *rg = take_region(s, &s->shares, addr, count);
	if (!rg)
		return -1;
	struct simxen_req req = { .op = SIMXEN_GNT_UNSHARE };
	struct simxen_rep rep;
	int r = xenif_sim_rpc(
	    s, &req, rg->refs, rg->count * sizeof(*rg->refs), &rep, NULL, 0, NULL, NULL, 0, NULL);
	int e = errno;
	munmap(rg->addr, (size_t)rg->count * SIMXEN_PAGE);
	free(rg->refs);
	free(rg);
	errno = e;
	return r;
}

void xenif_sim_gnt_forget(struct sim *s)
{
	/* Mappings stay valid after close, as with gntdev; only the bookkeeping goes. */
	for (struct region *r = s->maps, *n; r; r = n) {
		n = r->next;
		free(r);
	}
	for (struct region *r = s->shares, *n; r; r = n) {
		n = r->next;
		free(r->refs);
		free(r);
	}
}
