/*
 * xenif-selftest - exercises the xenif seam (xenif.h) on a real Xen, so that the
 * real backend (xenif-xen.c) is proven on its own, and so that every semantic
 * the simulated Xen must copy (errno values, masking, watch behaviour, dying
 * domains) is observed on the real thing and printed as XENTEST INFO lines.
 *
 *   xenif-selftest selftest [backend]   dom0: everything looped back to domid 0
 *   xenif-selftest domu [backend]       domU: share pages + offer a port, wait for dom0
 *   xenif-selftest peer DOMID [backend [--no-destroy]]
 *                                       dom0: map the domU's grants, round trip,
 *                                       then `xl destroy` it and watch the domain
 *                                       go dying -> gone once we unmap
 *
 * Output: "XENTEST PASS name" / "XENTEST FAIL name: why" per check.  Exit 1 on failure.
 * The backend argument (default "xen") lets the same checks run against the sim.
 */
#include <errno.h>
#include <stdarg.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "xenif.h"

#define PAGE   4096
#define NPAGES 4

static int nfail;

static void pass(const char *name)
{
	printf("XENTEST PASS %s\n", name);
	fflush(stdout);
}

__attribute__((format(printf, 2, 3))) static void failf(const char *name, const char *fmt, ...)
{
	int e = errno;
	va_list ap;
	printf("XENTEST FAIL %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" (errno %d %s)\n", e, strerror(e));
	fflush(stdout);
	nfail++;
}

#define CHECK(name, cond, ...)                    \
	do {                                      \
		if (cond)                         \
			pass(name);               \
		else                              \
			failf(name, __VA_ARGS__); \
	} while (0)

/*
 * What a call returned, as observed on real Xen 4.17 / Linux 6.1: want_errno 0 means
 * success expected, else -1 with that errno.  The simulation runs the same checks.
 */
static void semantics(const char *name, const char *what, int rc, int want_errno)
{
	int e = errno;
	printf("XENTEST INFO semantics %s -> rc=%d errno=%d (%s)\n", what, rc, rc < 0 ? e : 0,
	    rc < 0 ? strerror(e) : "-");
	errno = e;
	if (want_errno == 0)
		CHECK(name, rc >= 0, "%s: want success, got rc %d", what, rc);
	else
		CHECK(name, rc < 0 && e == want_errno, "%s: want errno %d, got rc %d", what,
		    want_errno, rc);
}

static int readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static struct xenif *open_or_die(const char *backend, unsigned parts)
{
	char err[256] = "";
	struct xenif *x = xenif_open(backend, NULL, parts, err, sizeof err);
	if (!x) {
		failf("xenif_open", "%s", err);
		exit(1);
	}
	return x;
}

/* Wait for the port to fire on x, then read it with pending(). */
static int wait_port(struct xenif *x, int ms)
{
	double end = now() + ms / 1000.0;
	for (;;) {
		int p = x->ops->evtchn_pending(x);
		if (p >= 0 || errno != EAGAIN)
			return p;
		int left = (int)((end - now()) * 1000);
		if (left <= 0 || !readable(x->ops->evtchn_fd(x), left)) {
			if (now() >= end) {
				errno = ETIMEDOUT;
				return -1;
			}
		}
	}
}

static void test_evtchn(const char *backend)
{
	struct xenif *a = open_or_die(backend, XENIF_EVTCHN),
	             *b = open_or_die(backend, XENIF_EVTCHN);
	int pa = a->ops->evtchn_bind_unbound(a, 0);
	int pb = pa < 0 ? -1 : b->ops->evtchn_bind_interdomain(b, 0, (xenif_port_t)pa);
	CHECK("evtchn_bind", pa >= 0 && pb >= 0, "unbound %d interdomain %d", pa, pb);
	if (pb < 0)
		goto out;
	/* Xen marks the new local port pending on bind_interdomain, because notifications
	 * sent to the unbound port before the bind would otherwise be lost */
	int r = wait_port(b, 2000);
	CHECK("evtchn_bind_interdomain_raises_event", r == pb, "got %d want %d", r, pb);
	b->ops->evtchn_unmask(b, (xenif_port_t)pb);
	errno = 0;
	r = a->ops->evtchn_pending(a);
	CHECK("evtchn_pending_eagain_when_idle", r == -1 && errno == EAGAIN, "r=%d", r);
	errno = 0;
	r = b->ops->evtchn_pending(b);
	CHECK("evtchn_pending_eagain_after_drain", r == -1 && errno == EAGAIN, "r=%d", r);

	b->ops->evtchn_notify(b, (xenif_port_t)pb);
	r = wait_port(a, 5000);
	CHECK("evtchn_b_to_a", r == pa, "got %d want %d", r, pa);
	errno = 0;
	r = a->ops->evtchn_pending(a);
	CHECK("evtchn_one_event_per_notify", r == -1 && errno == EAGAIN, "r=%d", r);

	/* masked until unmask: a notify now must not show, and must not be lost */
	b->ops->evtchn_notify(b, (xenif_port_t)pb);
	b->ops->evtchn_notify(b, (xenif_port_t)pb);
	int shown = readable(a->ops->evtchn_fd(a), 300);
	errno = 0;
	r = a->ops->evtchn_pending(a);
	CHECK("evtchn_masked_until_unmask", !shown && r == -1 && errno == EAGAIN,
	    "readable=%d pending=%d", shown, r);
	a->ops->evtchn_unmask(a, (xenif_port_t)pa);
	r = wait_port(a, 5000);
	CHECK("evtchn_notify_while_masked_delivered_on_unmask", r == pa, "got %d", r);
	errno = 0;
	int r2 = a->ops->evtchn_pending(a);
	CHECK("evtchn_notifies_while_masked_coalesce", r2 == -1 && errno == EAGAIN, "r=%d", r2);
	a->ops->evtchn_unmask(a, (xenif_port_t)pa);

	a->ops->evtchn_notify(a, (xenif_port_t)pa);
	r = wait_port(b, 5000);
	CHECK("evtchn_a_to_b", r == pb, "got %d want %d", r, pb);
	b->ops->evtchn_unmask(b, (xenif_port_t)pb);

	/* closing one end: what does a notify on the other end do? (sim must match) */
	r = b->ops->evtchn_unbind(b, (xenif_port_t)pb);
	CHECK("evtchn_unbind", r == 0, "unbind");
	r = a->ops->evtchn_notify(a, (xenif_port_t)pa);
	semantics("evtchn_notify_peer_unbound_ok", "evtchn_notify after peer unbound", r, 0);
	r = b->ops->evtchn_notify(b, (xenif_port_t)pb);
	semantics(
	    "evtchn_notify_unbound_enotconn", "evtchn_notify on own unbound port", r, ENOTCONN);
	r = b->ops->evtchn_unbind(b, (xenif_port_t)pb);
	semantics("evtchn_unbind_twice_enotconn", "evtchn_unbind twice", r, ENOTCONN);
	r = b->ops->evtchn_bind_interdomain(b, 0, 4000);
	semantics("evtchn_bind_not_offered_einval",
	    "evtchn_bind_interdomain to a port that is not offered", r, EINVAL);
	if (r >= 0)
		b->ops->evtchn_unbind(b, (xenif_port_t)r);
	r = b->ops->evtchn_bind_interdomain(b, 0, (xenif_port_t)pa);
	semantics("evtchn_rebind_after_peer_closed",
	    "evtchn_bind_interdomain to a port whose peer closed", r, 0);
	if (r >= 0)
		b->ops->evtchn_unbind(b, (xenif_port_t)r);
	a->ops->evtchn_unbind(a, (xenif_port_t)pa);
out:
	xenif_close(a);
	xenif_close(b);
}

static void test_grants(const char *backend)
{
	struct xenif *s = open_or_die(backend, XENIF_GNTSHR),
	             *m = open_or_die(backend, XENIF_GNTTAB);
	xenif_gref_t refs[NPAGES], ro;
	uint8_t *shr = s->ops->gntshr_share(s, 0, NPAGES, refs, true);
	CHECK("gntshr_share", shr != NULL, "share %d pages", NPAGES);
	if (!shr)
		goto out;
	int zero = 1;
	for (int i = 0; i < NPAGES * PAGE; i++)
		zero &= shr[i] == 0;
	CHECK("gntshr_pages_zeroed", zero, "fresh shared pages not zero");
	for (int i = 0; i < NPAGES; i++)
		memset(shr + i * PAGE, 0xa0 + i, PAGE);
	uint8_t *map = m->ops->gnttab_map(m, 0, NPAGES, refs, PROT_READ | PROT_WRITE);
	CHECK("gnttab_map", map != NULL, "map refs %u..", refs[0]);
	if (map) {
		int ok = 1;
		for (int i = 0; i < NPAGES * PAGE; i++)
			ok &= map[i] == 0xa0 + i / PAGE;
		CHECK("gnt_share_to_map_visible", ok, "pattern");
		map[3 * PAGE + 7] = 0x5a;
		CHECK("gnt_map_to_share_visible", shr[3 * PAGE + 7] == 0x5a, "write through map");
		CHECK("gnttab_unmap", m->ops->gnttab_unmap(m, map, NPAGES) == 0, "unmap");
	}
	/* read-only grant: mapping it writable must fail, read-only must work */
	uint8_t *rop = s->ops->gntshr_share(s, 0, 1, &ro, false);
	CHECK("gntshr_share_readonly", rop != NULL, "share ro");
	if (rop) {
		strcpy((char *)rop, "read-only");
		errno = 0;
		void *w = m->ops->gnttab_map(m, 0, 1, &ro, PROT_READ | PROT_WRITE);
		semantics("gnttab_map_ro_rw_einval", "gnttab_map PROT_WRITE of a read-only grant",
		    w ? 0 : -1, EINVAL);
		CHECK("gnttab_map_ro_grant_writable_refused", w == NULL, "mapped rw");
		if (w)
			m->ops->gnttab_unmap(m, w, 1);
		char *rd = m->ops->gnttab_map(m, 0, 1, &ro, PROT_READ);
		CHECK("gnttab_map_ro_grant_readonly", rd && !strcmp(rd, "read-only"), "map ro");
		if (rd)
			m->ops->gnttab_unmap(m, rd, 1);
		s->ops->gntshr_unshare(s, rop, 1);
	}
	/* a bogus ref and a domain that does not exist: errors, not crashes */
	xenif_gref_t bogus = 0x7ffff;
	errno = 0;
	void *bad = m->ops->gnttab_map(m, 0, 1, &bogus, PROT_READ);
	semantics(
	    "gnttab_map_bogus_einval", "gnttab_map of a ref never granted", bad ? 0 : -1, EINVAL);
	CHECK("gnttab_map_bogus_ref_fails", bad == NULL, "mapped a bogus ref");
	if (bad)
		m->ops->gnttab_unmap(m, bad, 1);
	errno = 0;
	bad = m->ops->gnttab_map(m, 31000, 1, refs, PROT_READ);
	semantics("gnttab_map_nodomain_einval", "gnttab_map from a domain that does not exist",
	    bad ? 0 : -1, EINVAL);
	CHECK("gnttab_map_no_such_domain_fails", bad == NULL, "mapped");
	if (bad)
		m->ops->gnttab_unmap(m, bad, 1);
	/* unshare while mapped: the pages stay valid for the mapper (refcounted) */
	map = m->ops->gnttab_map(m, 0, 1, refs, PROT_READ);
	if (map) {
		CHECK("gntshr_unshare_while_mapped", s->ops->gntshr_unshare(s, shr, NPAGES) == 0,
		    "unshare");
		shr = NULL;
		CHECK("gnttab_map_survives_unshare", map[0] == 0xa0, "page content %#x", map[0]);
		m->ops->gnttab_unmap(m, map, 1);
	}
	if (shr)
		s->ops->gntshr_unshare(s, shr, NPAGES);
out:
	xenif_close(s);
	xenif_close(m);
}

static void test_xs(const char *backend)
{
	struct xenif *x = open_or_die(backend, XENIF_XS), *y = open_or_die(backend, XENIF_XS);
	const struct xenif_ops *o = x->ops;
	xenif_domid_t me = 99;
	CHECK("xs_get_domid_dom0", o->xs_get_domid(x, &me) == 0 && me == 0, "domid %u", me);
	CHECK("xs_write", o->xs_write(x, 0, "/xenif-test/a", "hello", 5) == 0, "write");
	size_t len = 0;
	char *v = o->xs_read(x, 0, "/xenif-test/a", &len);
	CHECK("xs_read", v && len == 5 && !memcmp(v, "hello", 5), "read %s", v ? v : "(null)");
	free(v);
	errno = 0;
	v = o->xs_read(x, 0, "/xenif-test/missing", &len);
	CHECK("xs_read_missing_enoent", !v && errno == ENOENT, "read missing");
	free(v);
	o->xs_write(x, 0, "data/xenif-rel", "r", 1); /* relative: own home */
	v = o->xs_read(x, 0, "/local/domain/0/data/xenif-rel", &len);
	CHECK("xs_relative_path_is_home", v && len == 1, "relative write not under home");
	free(v);
	o->xs_rm(x, 0, "data/xenif-rel");
	o->xs_write(x, 0, "/xenif-test/b", "", 0);
	unsigned n = 0;
	char **d = o->xs_directory(x, 0, "/xenif-test", &n);
	CHECK("xs_directory", d && n == 2, "n=%u", n);
	free(d);

	errno = 0;
	struct xenif_xs_watch_event ev;
	int r = o->xs_read_watch(x, &ev);
	CHECK("xs_read_watch_eagain_when_idle", r == -1 && errno == EAGAIN, "r=%d", r);
	CHECK("xs_watch", o->xs_watch(x, "/xenif-test", "tok") == 0, "watch");
	/* real xenstored fires a watch once when it is registered */
	int fired = 0;
	double end = now() + 5;
	while (!fired && now() < end) {
		readable(o->xs_fileno(x), 500);
		while (o->xs_read_watch(x, &ev) == 0)
			fired |= !strcmp(ev.path, "/xenif-test") && !strcmp(ev.token, "tok");
	}
	CHECK("xs_watch_fires_on_registration", fired, "no initial event");
	y->ops->xs_write(y, 0, "/xenif-test/a/child", "1", 1);
	int child = 0;
	end = now() + 5;
	while (!child && now() < end) {
		readable(o->xs_fileno(x), 500);
		while (o->xs_read_watch(x, &ev) == 0)
			child |= !strcmp(ev.path, "/xenif-test/a/child");
	}
	CHECK("xs_watch_fires_for_child_write", child, "no event for a child");
	y->ops->xs_rm(y, 0, "/xenif-test/b");
	int rmev = 0;
	end = now() + 5;
	while (!rmev && now() < end) {
		readable(o->xs_fileno(x), 500);
		while (o->xs_read_watch(x, &ev) == 0)
			rmev |= !strcmp(ev.path, "/xenif-test/b");
	}
	CHECK("xs_watch_fires_for_rm", rmev, "no event for rm");

	/* a transaction that lost a race must end with EAGAIN */
	uint32_t t = o->xs_transaction_start(x);
	CHECK("xs_transaction_start", t != 0, "start");
	v = o->xs_read(x, t, "/xenif-test/a", &len);
	free(v);
	y->ops->xs_write(y, 0, "/xenif-test/a", "other", 5);
	o->xs_write(x, t, "/xenif-test/a", "mine", 4);
	errno = 0;
	r = o->xs_transaction_end(x, t, false);
	CHECK("xs_transaction_conflict_eagain", r == -1 && errno == EAGAIN, "r=%d", r);
	t = o->xs_transaction_start(x);
	o->xs_write(x, t, "/xenif-test/a", "mine", 4);
	v = y->ops->xs_read(y, 0, "/xenif-test/a", &len);
	CHECK("xs_transaction_isolated", v && len == 5, "uncommitted write visible");
	free(v);
	CHECK("xs_transaction_commit", o->xs_transaction_end(x, t, false) == 0, "end");
	v = y->ops->xs_read(y, 0, "/xenif-test/a", &len);
	CHECK("xs_transaction_committed_visible", v && len == 4, "after commit");
	free(v);
	o->xs_unwatch(x, "/xenif-test", "tok");
	o->xs_rm(x, 0, "/xenif-test");
	errno = 0;
	r = o->xs_rm(x, 0, "/xenif-test");
	semantics("xs_rm_missing_ok", "xs_rm of a missing node (parent exists)", r, 0);
	xenif_close(x);
	xenif_close(y);
}

static void test_ctrl(const char *backend)
{
	struct xenif *x = open_or_die(backend, XENIF_CTRL);
	struct xenif_dominfo di[8];
	int n = x->ops->ctrl_domain_list(x, 0, di, 8);
	CHECK("ctrl_domain_list_dom0", n >= 1 && di[0].domid == 0 && !di[0].dying, "n=%d", n);
	for (int i = 0; i < n; i++)
		printf("XENTEST INFO domain %u dying=%d shutdown=%d crashed=%d\n", di[i].domid,
		    di[i].dying, di[i].shutdown, di[i].crashed);
	n = x->ops->ctrl_domain_list(x, 30000, di, 8);
	CHECK("ctrl_domain_list_past_end_empty", n == 0, "n=%d", n);
	xenif_close(x);
}

static int run_selftest(const char *backend)
{
	double t0 = now();
	test_ctrl(backend);
	test_xs(backend);
	test_evtchn(backend);
	test_grants(backend);
	printf("XENTEST INFO selftest took %.3f s\n", now() - t0);
	return nfail ? 1 : 0;
}

/* ---- domU side of the dom0 <-> domU round trip ---- */
static int run_domu(const char *backend)
{
	struct xenif *x = open_or_die(backend, XENIF_GNTSHR | XENIF_EVTCHN | XENIF_XS);
	const struct xenif_ops *o = x->ops;
	xenif_domid_t me = 0;
	CHECK("domu_get_domid", o->xs_get_domid(x, &me) == 0 && me != 0, "domid %u", me);
	xenif_gref_t refs[NPAGES], ro;
	uint8_t *shr = o->gntshr_share(x, 0, NPAGES, refs, true);
	uint8_t *rop = o->gntshr_share(x, 0, 1, &ro, false);
	CHECK("domu_share", shr && rop, "share");
	if (!shr || !rop)
		return 1;
	for (int i = 0; i < NPAGES; i++)
		snprintf((char *)shr + i * PAGE, 64, "from-dom%u-page-%d", me, i);
	strcpy((char *)rop, "read-only-from-domU");
	int port = o->evtchn_bind_unbound(x, 0);
	CHECK("domu_bind_unbound", port >= 0, "bind");
	char buf[128];
	snprintf(buf, sizeof buf, "%u %u %u %u %u", refs[0], refs[1], refs[2], refs[3], ro);
	o->xs_write(x, 0, "data/xenif-test/refs", buf, strlen(buf));
	snprintf(buf, sizeof buf, "%d", port);
	o->xs_write(x, 0, "data/xenif-test/port", buf, strlen(buf));
	CHECK("domu_published", o->xs_write(x, 0, "data/xenif-test/ready", "1", 1) == 0, "xs");
	int p = wait_port(x, 900000);
	int ok = p == port && !strcmp((char *)shr + 2 * PAGE + 8, "from-dom0");
	CHECK("domu_event_and_data_from_dom0", ok, "port %d", p);
	o->xs_write(x, 0, "data/xenif-test/result", ok ? "ok" : "bad", ok ? 2 : 3);
	o->evtchn_unmask(x, (xenif_port_t)port);
	o->evtchn_notify(x, (xenif_port_t)port);
	/* stay alive: dom0 destroys us (xl destroy) to test teardown */
	pause();
	return nfail ? 1 : 0;
}

static int domain_state(struct xenif *c, xenif_domid_t dom)
{
	struct xenif_dominfo di;
	int n = c->ops->ctrl_domain_list(c, dom, &di, 1);
	if (n != 1 || di.domid != dom)
		return 0; /* gone */
	return di.dying ? 2 : 1;
}

/* ---- dom0 side: map, round trip, then watch the destroy ---- */
static int run_peer(xenif_domid_t dom, const char *backend, bool destroy)
{
	struct xenif *x = open_or_die(backend, XENIF_GNTTAB | XENIF_EVTCHN | XENIF_XS | XENIF_CTRL);
	const struct xenif_ops *o = x->ops;
	char key[128];
	snprintf(key, sizeof key, "/local/domain/%u/data/xenif-test/ready", dom);
	char *v = NULL;
	double end = now() + 600; /* a domU boots in ~10 s, but minutes on a loaded host */
	while (!(v = o->xs_read(x, 0, key, NULL)) && now() < end)
		usleep(100000);
	CHECK("peer_domu_ready", v != NULL, "domU never published");
	if (!v)
		return 1;
	free(v);
	snprintf(key, sizeof key, "/local/domain/%u/data/xenif-test/refs", dom);
	char *rs = o->xs_read(x, 0, key, NULL);
	snprintf(key, sizeof key, "/local/domain/%u/data/xenif-test/port", dom);
	char *ps = o->xs_read(x, 0, key, NULL);
	xenif_gref_t refs[NPAGES], ro;
	if (!rs || !ps ||
	    sscanf(rs, "%u %u %u %u %u", &refs[0], &refs[1], &refs[2], &refs[3], &ro) != 5) {
		failf("peer_read_refs", "refs=%s port=%s", rs ? rs : "-", ps ? ps : "-");
		return 1;
	}
	int rport = atoi(ps);
	free(rs);
	free(ps);
	uint8_t *map = o->gnttab_map(x, dom, NPAGES, refs, PROT_READ | PROT_WRITE);
	CHECK("peer_map_domu_grants", map != NULL, "map");
	if (!map)
		return 1;
	int ok = 1;
	for (int i = 0; i < NPAGES; i++) {
		char exp[64];
		snprintf(exp, sizeof exp, "from-dom%u-page-%d", dom, i);
		ok &= !strcmp((char *)map + i * PAGE, exp);
	}
	CHECK("peer_domu_grant_content", ok, "content");
	errno = 0;
	void *w = o->gnttab_map(x, dom, 1, &ro, PROT_READ | PROT_WRITE);
	semantics("peer_gnttab_map_ro_rw_einval",
	    "peer gnttab_map PROT_WRITE of a domU read-only grant", w ? 0 : -1, EINVAL);
	CHECK("peer_ro_grant_not_writable", w == NULL, "mapped rw");
	char *rd = o->gnttab_map(x, dom, 1, &ro, PROT_READ);
	CHECK("peer_ro_grant_readable", rd && !strcmp(rd, "read-only-from-domU"), "ro map");
	strcpy((char *)map + 2 * PAGE + 8, "from-dom0");
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	int lp = o->evtchn_bind_interdomain(x, dom, (xenif_port_t)rport);
	CHECK("peer_bind_interdomain", lp >= 0, "bind dom%u port %d", dom, rport);
	if (lp < 0)
		return 1;
	int p = wait_port(x, 2000);
	CHECK("peer_bind_interdomain_raises_event", p == lp, "got %d", p);
	o->evtchn_unmask(x, (xenif_port_t)lp);
	errno = 0;
	int dup = o->evtchn_bind_interdomain(x, dom, (xenif_port_t)rport);
	semantics("peer_bind_already_bound_einval",
	    "evtchn_bind_interdomain to an already-bound remote port", dup, EINVAL);
	if (dup >= 0)
		o->evtchn_unbind(x, (xenif_port_t)dup);
	o->evtchn_notify(x, (xenif_port_t)lp);
	p = wait_port(x, 120000);
	CHECK("peer_event_from_domu", p == lp, "got %d", p);
	o->evtchn_unmask(x, (xenif_port_t)lp);
	snprintf(key, sizeof key, "/local/domain/%u/data/xenif-test/result", dom);
	v = o->xs_read(x, 0, key, NULL); /* written before the domU notified */
	CHECK("peer_domu_saw_dom0_write", v && !strcmp(v, "ok"), "result %s", v ? v : "-");
	free(v);
	CHECK("peer_watch_release_domain", o->xs_watch(x, "@releaseDomain", "rel") == 0, "watch");
	double tw = now() + 2; /* drain the event fired on registration */
	struct xenif_xs_watch_event ev;
	while (now() < tw && readable(o->xs_fileno(x), 200))
		while (o->xs_read_watch(x, &ev) == 0)
			;

	if (!destroy) {
		o->gnttab_unmap(x, map, NPAGES);
		if (rd)
			o->gnttab_unmap(x, rd, 1);
		o->evtchn_unbind(x, (xenif_port_t)lp);
		xenif_close(x);
		return nfail ? 1 : 0;
	}
	/* destroy while we still map its pages: it must stay a dying zombie until we unmap */
	printf("XENTEST INFO peer ready for destroy of dom%u\n", dom);
	fflush(stdout);
	/* the toolstack's destroy: xl on real Xen; XENIF_DESTROY_CMD (a format with %u)
	 * lets the same check run on the simulation ("mtrace-simxen destroy %u") */
	const char *dcmd = getenv("XENIF_DESTROY_CMD");
	if (!dcmd || !strstr(dcmd, "%u"))
		dcmd = "xl destroy %u";
	const char *pct = strstr(dcmd, "%u");
	snprintf(key, sizeof key, "%.*s%u%s", (int)(pct - dcmd), dcmd, dom, pct + 2);
	int sr = system(key);
	CHECK("peer_xl_destroy", sr == 0, "xl destroy rc %d", sr);
	int st = 1;
	end = now() + 120;
	while ((st = domain_state(x, dom)) == 1 && now() < end)
		usleep(50000);
	CHECK("peer_destroyed_domain_dying_while_mapped", st == 2, "state %d (0 gone 1 alive)", st);
	int rel = 0;
	tw = now() + 5;
	while (!rel && now() < tw) {
		readable(o->xs_fileno(x), 200);
		while (o->xs_read_watch(x, &ev) == 0)
			rel |= !strcmp(ev.path, "@releaseDomain");
	}
	CHECK("peer_release_domain_fires_while_dying", rel, "no @releaseDomain while mapped");
	/* the domU's side of the channel is closed: does dom0's port see anything? */
	int ev_on_destroy = readable(o->evtchn_fd(x), 1000);
	errno = 0;
	int r = o->evtchn_pending(x);
	printf(
	    "XENTEST INFO semantics destroy of the peer domain: evtchn fd readable=%d pending=%d\n",
	    ev_on_destroy, r);
	/* real Xen sends nothing: a reader must watch @releaseDomain, not its port */
	CHECK("peer_destroy_raises_no_event", !ev_on_destroy && r < 0, "readable %d pending %d",
	    ev_on_destroy, r);
	if (r >= 0)
		o->evtchn_unmask(x, (xenif_port_t)r);
	errno = 0;
	r = o->evtchn_notify(x, (xenif_port_t)lp);
	semantics("peer_notify_destroyed_ok", "evtchn_notify to a destroyed domain", r, 0);
	snprintf(key, sizeof key, "/local/domain/%u", dom);
	unsigned n = 0;
	char **d = o->xs_directory(x, 0, key, &n);
	semantics("peer_destroyed_home_enoent", "xs_directory of a destroyed domain's home",
	    d ? (int)n : -1, ENOENT);
	free(d);
	CHECK("peer_mapping_readable_after_destroy", map[0] == 'f', "byte %#x", map[0]);
	CHECK("peer_unmap_after_destroy",
	    o->gnttab_unmap(x, map, NPAGES) == 0 && (!rd || o->gnttab_unmap(x, rd, 1) == 0),
	    "unmap");
	CHECK("peer_unbind_after_destroy", o->evtchn_unbind(x, (xenif_port_t)lp) == 0, "unbind");
	end = now() + 120;
	while ((st = domain_state(x, dom)) != 0 && now() < end)
		usleep(50000);
	CHECK("peer_domain_gone_after_unmap", st == 0, "state %d", st);
	xenif_close(x);
	return nfail ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *mode = argc > 1 ? argv[1] : "selftest";
	if (!strcmp(mode, "selftest"))
		return run_selftest(argc > 2 ? argv[2] : "xen");
	if (!strcmp(mode, "domu"))
		return run_domu(argc > 2 ? argv[2] : "xen");
	if (!strcmp(mode, "peer") && argc > 2) {
		/* "peer DOMID [backend] [--no-destroy]": the domU may have other work to do */
		bool destroy = !(argc > 4 && !strcmp(argv[4], "--no-destroy"));
		return run_peer(
		    (xenif_domid_t)strtoul(argv[2], NULL, 10), argc > 3 ? argv[3] : "xen", destroy);
	}
	fprintf(
	    stderr, "usage: xenif-selftest selftest|domu|peer DOMID [backend [--no-destroy]]\n");
	return 2;
}
