/*
 * xenif-xen-tbuf.c - the hypervisor's trace buffers on real Xen (XENIF_TBUF), as
 * xentrace reads them (tools/xentrace/xentrace.c, xen/common/trace.c of Xen 4.17):
 *
 *   xc_tbuf_enable    sets the size (pages per CPU) unless Xen has one already, turns
 *                     tracing on, and names the t_info area (its first frame, its size)
 *   t_info            uint16 tbuf_size (pages), uint16 mfn_offset[cpu] (in uint32 words
 *                     from t_info's start: that CPU's list of tbuf_size frames, 0: none)
 *   a CPU's buffer    struct t_buf {cons, prod} then data_size bytes of records; cons and
 *                     prod are byte offsets that run modulo 2 * data_size
 *
 * Xen writes t_info once and the buffers all the time: what we take from t_info is
 * copied once and checked against the mapping's size before a frame list is used, and
 * a window is copied once (tbuf_read) before anyone decodes it.  prod and cons are read
 * once each and checked as Xen's own bogus() does; only cons is ever written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "xenif-xen-int.h"

#include <xen/trace.h> /* after xenctrl.h (xenif-xen-int.h): it needs <stdint.h> */

#define TB_PAGE 4096u
/* Xen caps a buffer so that 2 * data_size fits prod's 32 bits; a t_info that says more
 * pages than this per CPU, or more CPUs than this, is not one we map. */
#define TB_MAX_PAGES 65535u
#define TB_MAX_CPUS  4096u

struct xen_tbuf {
	void *tinfo; /* t_info, read-only */
	size_t tinfo_pages;
	uint32_t ncpus, pages, data_size;
	struct t_buf **meta; /* each CPU's mapping (header then data), NULL: no buffer */
};

static void unmap_all(struct xen_priv *p, struct xen_tbuf *tb)
{
	if (tb->meta) {
		for (uint32_t c = 0; c < tb->ncpus; c++)
			if (tb->meta[c])
				xenforeignmemory_unmap(p->fm, tb->meta[c], tb->pages);
		free(tb->meta);
	}
	if (tb->tinfo)
		xenforeignmemory_unmap(p->fm, tb->tinfo, tb->tinfo_pages);
	free(tb);
}

/* cpu's frame list out of t_info, copied and checked; 0, or -1/ENOENT (no buffer) or
 * -1/EPROTO (a list outside t_info). */
static int cpu_frames(const struct xen_tbuf *tb, uint32_t cpu, xen_pfn_t *pfns)
{
	const volatile uint16_t *off16 = (const volatile uint16_t *)tb->tinfo;
	const volatile uint32_t *words = (const volatile uint32_t *)tb->tinfo;
	size_t nwords = tb->tinfo_pages * TB_PAGE / sizeof(uint32_t);
	/* mfn_offset[cpu] is the (cpu + 1)th uint16 after tbuf_size */
	size_t at = 1 + (size_t)cpu;

	if ((at + 1) * sizeof(uint16_t) > tb->tinfo_pages * TB_PAGE) {
		errno = EPROTO;
		return -1;
	}
	uint32_t off = off16[at];
	if (off == 0) {
		errno = ENOENT;
		return -1;
	}
	if ((size_t)off + tb->pages > nwords) {
		errno = EPROTO;
		return -1;
	}
	for (uint32_t i = 0; i < tb->pages; i++) {
		uint32_t mfn = words[off + i];
		if (mfn == 0) {
			errno = EPROTO;
			return -1;
		}
		pfns[i] = mfn;
	}
	return 0;
}

int xenif_xen_tbuf_open(
    struct xenif *x, uint32_t pages, uint32_t evt_mask, struct xenif_tbuf_info *info)
{
	struct xen_priv *p = P(x);
	unsigned long tinfo_mfn = 0, tinfo_size = 0;
	xc_physinfo_t phys;

	NEED(p->xc, -1);
	NEED(p->fm, -1);
	if (p->tb) {
		errno = EBUSY;
		return -1;
	}
	if (pages == 0 || pages > TB_MAX_PAGES) {
		errno = EINVAL;
		return -1;
	}
	if (xc_physinfo(p->xc, &phys) != 0)
		return -1;
	if (xc_tbuf_set_evt_mask(p->xc, evt_mask) != 0)
		return -1;
	/* the size is Xen's once set (boot's tbuf_size= or an earlier tool): keep it */
	if (xc_tbuf_enable(p->xc, pages, &tinfo_mfn, &tinfo_size) != 0)
		return -1;
	if (tinfo_mfn == 0 || tinfo_size == 0 || tinfo_size % TB_PAGE ||
	    tinfo_size / TB_PAGE > 1024) {
		errno = EPROTO;
		return -1;
	}
	struct xen_tbuf *tb = calloc(1, sizeof(*tb));
	if (!tb)
		return -1;
	tb->tinfo_pages = tinfo_size / TB_PAGE;
	tb->ncpus = phys.max_cpu_id + 1 < TB_MAX_CPUS ? phys.max_cpu_id + 1 : TB_MAX_CPUS;
	xen_pfn_t *pfns = calloc(tb->tinfo_pages, sizeof(*pfns)), *more;
	if (!pfns) {
		free(tb);
		return -1;
	}
	/* t_info is contiguous (one xenheap allocation): frames mfn, mfn + 1, ... */
	for (size_t i = 0; i < tb->tinfo_pages; i++)
		pfns[i] = tinfo_mfn + i;
	tb->tinfo = xenforeignmemory_map(p->fm, DOMID_XEN, PROT_READ, tb->tinfo_pages, pfns, NULL);
	if (!tb->tinfo)
		goto fail;
	tb->pages = *(const volatile uint16_t *)tb->tinfo;
	if (tb->pages == 0) {
		errno = EPROTO;
		goto fail;
	}
	tb->data_size = tb->pages * TB_PAGE - (uint32_t)sizeof(struct t_buf);
	if (!(more = realloc(pfns, tb->pages * sizeof(*pfns))))
		goto fail;
	pfns = more;
	if (!(tb->meta = calloc(tb->ncpus, sizeof(*tb->meta))))
		goto fail;
	for (uint32_t c = 0; c < tb->ncpus; c++) {
		if (cpu_frames(tb, c, pfns) < 0) {
			if (errno == ENOENT)
				continue; /* an offline CPU has no buffer */
			goto fail;
		}
		tb->meta[c] = xenforeignmemory_map(
		    p->fm, DOMID_XEN, PROT_READ | PROT_WRITE, tb->pages, pfns, NULL);
		if (!tb->meta[c])
			goto fail;
	}
	free(pfns);
	p->tb = tb;
	info->ncpus = tb->ncpus;
	info->pages = tb->pages;
	info->data_size = tb->data_size;
	info->evt_mask = evt_mask;
	return 0;
fail:;
	int e = errno ? errno : EIO;
	free(pfns);
	unmap_all(p, tb);
	xc_tbuf_disable(p->xc);
	errno = e;
	return -1;
}

long xenif_xen_tbuf_read(struct xenif *x, uint32_t cpu, void *buf, size_t len)
{
	struct xen_priv *p = P(x);
	struct xen_tbuf *tb = p->tb;

	NEED(tb, -1);
	if (cpu >= tb->ncpus || len < tb->data_size) {
		errno = EINVAL;
		return -1;
	}
	volatile struct t_buf *m = tb->meta[cpu];
	if (!m) {
		errno = ENOENT;
		return -1;
	}
	uint32_t cons = m->cons, prod = m->prod;
	__atomic_thread_fence(__ATOMIC_ACQUIRE); /* prod, then the records it covers */
	uint32_t ds = tb->data_size;
	if ((prod & 3) || (cons & 3) || prod >= 2 * ds || cons >= 2 * ds) {
		errno = EPROTO;
		return -1;
	}
	uint32_t win = prod >= cons ? prod - cons : prod + 2 * ds - cons;
	if (win > ds) {
		errno = EPROTO;
		return -1;
	}
	if (win == 0)
		return 0;
	const uint8_t *data = (const uint8_t *)(m + 1);
	uint32_t start = cons % ds, first = ds - start < win ? ds - start : win;
	memcpy(buf, data + start, first);
	memcpy((uint8_t *)buf + first, data, win - first);
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* the copy, then the window goes back */
	m->cons = prod;
	return (long)win;
}

void xenif_xen_tbuf_close(struct xenif *x)
{
	struct xen_priv *p = P(x);

	if (!p->tb)
		return;
	unmap_all(p, p->tb);
	p->tb = NULL;
	if (p->xc)
		xc_tbuf_disable(p->xc);
}

int xenif_xen_sched_sample(struct xenif *x, xenif_domid_t domid, struct xenif_vcpu_sample *v,
    unsigned max, int64_t *realtime_ns, uint64_t *width_ns)
{
	(void)x, (void)domid, (void)v, (void)max, (void)realtime_ns, (void)width_ns;
	errno = ENOTSUP; /* real Xen's scheduling comes from its trace buffers */
	return -1;
}
