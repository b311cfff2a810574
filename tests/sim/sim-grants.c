/*
 * sim-grants.c - sim-test's grants and event-channel cases: the hypervisor's memory and
 * notifications between dom0 and a guest, as sim/README.md says they behave.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "sim-test.h"
#include "simxen-proto.h"
#include "xenif.h"

int case_grants(void)
{
	struct xenif *x = open_x(XENIF_GNTTAB | XENIF_XS | XENIF_CTRL);
	unsigned g = create_guest("granter", "", "share");
	char *v = wait_xs(x, "1", 10000, "/local/domain/%u/data/ready", g);
	REQUIRE(v, "guest never ready");
	free(v);
	xenif_gref_t ro[2], rw[2], other[1];
	v = wait_xs(x, NULL, 100, "/local/domain/%u/data/ro", g);
	REQUIRE(v && parse_refs(v, ro, 2) == 2, "ro refs");
	free(v);
	v = wait_xs(x, NULL, 100, "/local/domain/%u/data/rw", g);
	REQUIRE(v && parse_refs(v, rw, 2) == 2, "rw refs");
	free(v);
	v = wait_xs(x, NULL, 100, "/local/domain/%u/data/other", g);
	REQUIRE(v && parse_refs(v, other, 1) == 1, "other ref");
	free(v);

	/* Read-only grant: readable, one contiguous mapping of both refs. */
	uint8_t *m = x->ops->gnttab_map(x, g, 2, ro, PROT_READ);
	REQUIRE(m, "map ro grant read-only");
	CHECK(page_is(m, 0xA0) && page_is(m + PAGE, 0xA1), "ro pages contiguous with content");
	CHECK(write_faults(m), "a write through a read-only mapping must fault");
	CHECK(mprotect(m, PAGE, PROT_READ | PROT_WRITE) < 0, "mprotect RO grant mapping writable");
	errno = 0;
	CHECK(!x->ops->gnttab_map(x, g, 2, ro, PROT_READ | PROT_WRITE) && errno == EINVAL,
	    "ro grant mapped writable must fail with EINVAL");
	errno = 0;
	CHECK(!x->ops->gnttab_map(x, g, 1, &ro[1], PROT_READ | PROT_WRITE) && errno == EINVAL,
	    "ro grant (one ref) mapped writable");

	/* Read-write grant: our writes reach the guest. */
	uint8_t *w = x->ops->gnttab_map(x, g, 2, rw, PROT_READ | PROT_WRITE);
	REQUIRE(w, "map rw grant");
	CHECK(page_is(w, 0xB0) && page_is(w + PAGE, 0xB1), "rw pages content");
	strcpy((char *)w + PAGE, "dom0 was here");
	char ack[128];
	guest_cmd(x, g, "check-rw", "check-rw", ack, sizeof(ack));
	CHECK(!strcmp(ack, "check-rw ok"), "guest sees dom0's write: %s", ack);
	/* Mixed refs in one contiguous map keep their order. */
	xenif_gref_t mix[3] = { rw[1], ro[0], rw[0] };
	uint8_t *mx = x->ops->gnttab_map(x, g, 3, mix, PROT_READ);
	CHECK(mx && !strcmp((char *)mx, "dom0 was here") && page_is(mx + PAGE, 0xA0) &&
	        page_is(mx + 2 * PAGE, 0xB0),
	    "mixed refs map in order");
	if (mx)
		CHECK(x->ops->gnttab_unmap(x, mx, 3) == 0, "unmap mixed");

	/* Not the grantee, wrong granter, bad refs. */
	errno = 0;
	CHECK(!x->ops->gnttab_map(x, g, 1, other, PROT_READ) && errno == EINVAL,
	    "page granted to domain 999 mapped by dom0");
	errno = 0;
	CHECK(!x->ops->gnttab_map(x, 0, 1, ro, PROT_READ) && errno == EINVAL,
	    "ref mapped from the wrong granting domain");
	errno = 0;
	CHECK(!x->ops->gnttab_map(x, 4242, 1, ro, PROT_READ) && errno == EINVAL,
	    "map from a domain that does not exist");
	xenif_gref_t bad[4] = { 0, 7, 99999, 0xFFFFFFFFu };
	for (int i = 0; i < 4; i++) {
		errno = 0;
		CHECK(!x->ops->gnttab_map(x, g, 1, &bad[i], PROT_READ) && errno == EINVAL,
		    "bad ref %u", bad[i]);
	}
	xenif_gref_t half[2] = { ro[0], 99999 };
	errno = 0;
	CHECK(!x->ops->gnttab_map(x, g, 2, half, PROT_READ) && errno == EINVAL,
	    "one bad ref fails the whole map");
	errno = 0;
	CHECK(!x->ops->gnttab_map(x, g, 0, ro, PROT_READ) && errno == EINVAL, "count 0");
	errno = 0;
	CHECK(x->ops->gnttab_unmap(x, (void *)0x10000, 1) < 0 && errno == EINVAL,
	    "unmap of something never mapped");

	/* Revocation: a new map fails, the existing mapping stays valid. */
	guest_cmd(x, g, "unshare-ro", "unshare-ro", ack, sizeof(ack));
	CHECK(!strcmp(ack, "unshare-ro 0"), "guest unshared: %s", ack);
	errno = 0;
	CHECK(!x->ops->gnttab_map(x, g, 1, ro, PROT_READ) && errno == EINVAL, "revoked ref");
	CHECK(page_is(m, 0xA0), "existing mapping of a revoked grant still readable");
	CHECK(x->ops->gnttab_unmap(x, m, 2) == 0, "unmap ro");

	/* The granter dies: what we have mapped stays valid; nothing new can be mapped;
	 * like Xen, the domain stays dying until we unmap. */
	CHECK(cli(NULL, 0, "destroy %u", g) == 0, "destroy granter");
	struct xenif_dominfo di;
	CHECK(dominfo(x, g, &di) && di.dying, "destroyed domain still mapped: dying");
	CHECK(!strcmp((char *)w + PAGE, "dom0 was here") && page_is(w, 0xB0),
	    "dead domain's pages still readable");
	w[0] = 1;
	CHECK(w[0] == 1, "and writable");
	errno = 0;
	CHECK(!x->ops->gnttab_map(x, g, 1, rw, PROT_READ) && errno == EINVAL,
	    "map from a destroyed domain");
	CHECK(x->ops->gnttab_unmap(x, w, 2) == 0, "unmap rw");
	long end = now_ms() + 5000;
	while (dominfo(x, g, &di) && now_ms() < end)
		sleep_ms(20);
	CHECK(!dominfo(x, g, &di), "gone once the last mapping went");

	/* Loopback, as xentest does on real Xen: dom0 grants to itself. */
	struct xenif *s = open_x(XENIF_GNTSHR);
	xenif_gref_t lr[4];
	uint8_t *sp = s->ops->gntshr_share(s, 0, 4, lr, true);
	REQUIRE(sp, "dom0 share to itself");
	for (int i = 0; i < 4; i++)
		memset(sp + i * PAGE, 0x10 + i, PAGE);
	uint8_t *lm = x->ops->gnttab_map(x, 0, 4, lr, PROT_READ | PROT_WRITE);
	REQUIRE(lm, "map own grants");
	CHECK(page_is(lm + 3 * PAGE, 0x13), "loopback content");
	lm[100] = 0x77;
	CHECK(sp[100] == 0x77, "loopback write visible to the sharer");
	CHECK(s->ops->gntshr_unshare(s, sp, 4) == 0, "unshare");
	errno = 0;
	CHECK(s->ops->gntshr_unshare(s, sp, 4) < 0 && errno == EINVAL, "double unshare");
	CHECK(lm[100] == 0x77, "mapping outlives unshare");
	/* Closing the sharing handle revokes what it still shares. */
	xenif_gref_t cr;
	CHECK(s->ops->gntshr_share(s, 0, 1, &cr, false) != NULL, "share before close");
	xenif_close(s);
	errno = 0;
	CHECK(!x->ops->gnttab_map(x, 0, 1, &cr, PROT_READ) && errno == EINVAL,
	    "grant of a closed handle");
	xenif_close(x);
	return check_failures != 0;
}

/* Count what is pending now on handle h, unmasking each; waits ms first. */
static int drain(struct xenif *h, int ms, bool unmask)
{
	int n = 0, p;
	if (ms)
		readable(h->ops->evtchn_fd(h), ms);
	sleep_ms(20);
	while ((p = h->ops->evtchn_pending(h)) >= 0) {
		n++;
		if (unmask)
			h->ops->evtchn_unmask(h, (xenif_port_t)p);
	}
	return n;
}

int case_evtchn(void)
{
	/* Loopback inside dom0: two handles, as two processes would have. */
	struct xenif *a = open_x(XENIF_EVTCHN), *b = open_x(XENIF_EVTCHN);
	errno = 0;
	CHECK(a->ops->evtchn_pending(a) < 0 && errno == EAGAIN, "nothing pending: EAGAIN");
	int pa = a->ops->evtchn_bind_unbound(a, 0);
	REQUIRE(pa > 0, "bind_unbound");
	int pb = b->ops->evtchn_bind_interdomain(b, 0, (xenif_port_t)pa);
	REQUIRE(pb > 0 && pb != pa, "bind_interdomain %d", pb);
	/* Xen marks the binder's new port pending once. */
	CHECK(drain(b, 1000, true) == 1, "initial event on the binding side");
	errno = 0;
	CHECK(b->ops->evtchn_bind_interdomain(b, 0, (xenif_port_t)pa) < 0 && errno == EINVAL,
	    "bind a port that is already connected");
	/* One notification, one delivery. */
	CHECK(a->ops->evtchn_notify(a, (xenif_port_t)pa) == 0, "notify");
	CHECK(readable(b->ops->evtchn_fd(b), 2000), "evtchn fd pollable");
	int got = b->ops->evtchn_pending(b);
	CHECK(got == pb, "pending returns the local port (%d, want %d)", got, pb);
	/* Masked now: a storm coalesces to one delivery after the unmask. */
	for (int i = 0; i < 1000; i++)
		a->ops->evtchn_notify(a, (xenif_port_t)pa);
	CHECK(drain(b, 0, false) == 0, "nothing delivered while masked");
	b->ops->evtchn_unmask(b, (xenif_port_t)pb);
	CHECK(drain(b, 1000, false) == 1, "1000 notifications while masked: one delivery");
	CHECK(drain(b, 100, false) == 0, "and only one");
	b->ops->evtchn_unmask(b, (xenif_port_t)pb);
	CHECK(drain(b, 100, false) == 0, "unmask with nothing pending delivers nothing");
	/* Unmasked and not yet read: still only one (the driver masks on delivery). */
	/* Unmasked: the first is delivered (and masks), the other 49 coalesce into one
	 * more delivery once that is unmasked, as the pending bit does on Xen. */
	for (int i = 0; i < 50; i++)
		a->ops->evtchn_notify(a, (xenif_port_t)pa);
	CHECK(drain(b, 1000, true) == 2, "burst while unmasked: two deliveries");
	CHECK(drain(b, 100, true) == 0, "burst left nothing pending after unmask");
	/* Both directions. */
	b->ops->evtchn_notify(b, (xenif_port_t)pb);
	CHECK(drain(a, 1000, true) == 1, "reverse direction");
	/* Ports of another handle. */
	errno = 0;
	CHECK(a->ops->evtchn_notify(a, (xenif_port_t)pb) < 0 && errno == ENOTCONN,
	    "notify a port of another handle");
	errno = 0;
	CHECK(a->ops->evtchn_unbind(a, (xenif_port_t)pb) < 0 && errno == ENOTCONN,
	    "unbind a port of another handle");
	errno = 0;
	CHECK(a->ops->evtchn_bind_interdomain(a, 4242, 1) < 0 && errno == ESRCH,
	    "bind to a domain that does not exist");
	errno = 0;
	CHECK(a->ops->evtchn_bind_interdomain(a, 0, 999) < 0 && errno == EINVAL, "bad remote port");
	/* Unbind: the peer's notifications go nowhere. */
	CHECK(b->ops->evtchn_unbind(b, (xenif_port_t)pb) == 0, "unbind");
	CHECK(a->ops->evtchn_notify(a, (xenif_port_t)pa) == 0, "notify an unbound peer is silent");
	CHECK(drain(b, 100, true) == 0, "unbound port gets nothing");
	/* The peer went back to unbound and can be bound again. */
	pb = b->ops->evtchn_bind_interdomain(b, 0, (xenif_port_t)pa);
	CHECK(pb > 0, "rebind after the peer unbound");
	CHECK(drain(b, 1000, true) == 1, "rebind initial event");
	/* Closing a handle closes its ports. */
	xenif_close(a);
	CHECK(b->ops->evtchn_notify(b, (xenif_port_t)pb) == 0, "notify peer of a closed handle");

	/* Across domains. */
	struct xenif *x = open_x(XENIF_EVTCHN | XENIF_XS | XENIF_CTRL);
	unsigned g = create_guest("evt", "", "share");
	char *v = wait_xs(x, "1", 10000, "/local/domain/%u/data/ready", g);
	REQUIRE(v, "guest ready");
	free(v);
	v = wait_xs(x, NULL, 100, "/local/domain/%u/data/port", g);
	REQUIRE(v, "port");
	int gport = atoi(v);
	free(v);
	errno = 0;
	CHECK(b->ops->evtchn_bind_interdomain(b, g, 1000) < 0 && errno == EINVAL,
	    "bad port of guest");
	int lp = x->ops->evtchn_bind_interdomain(x, g, (xenif_port_t)gport);
	REQUIRE(lp > 0, "bind to guest port");
	drain(x, 500, true);
	char ack[64];
	guest_cmd(x, g, "notify 500", "notify", ack, sizeof(ack));
	CHECK(!strcmp(ack, "notify 500 0"), "guest notified: %s", ack);
	int n1 = drain(x, 1000, false);
	CHECK(n1 == 1, "guest's 500 notifications, masked: %d deliveries", n1);
	x->ops->evtchn_unmask(x, (xenif_port_t)lp);
	CHECK(drain(x, 1000, true) == 1, "pending one after unmask");
	/* Each notification is counted (and unmasked) by the guest before the next. */
	for (int i = 1; i <= 3; i++) {
		char want[32];
		x->ops->evtchn_notify(x, (xenif_port_t)lp);
		guest_cmd(x, g, "count", "count", ack, sizeof(ack));
		snprintf(want, sizeof(want), "count %d", i);
		CHECK(!strcmp(ack, want), "guest received dom0's notification %d: %s", i, ack);
	}
	/* The guest is destroyed: our port falls back to unbound and gets nothing. */
	CHECK(cli(NULL, 0, "destroy %u", g) == 0, "destroy");
	CHECK(x->ops->evtchn_notify(x, (xenif_port_t)lp) == 0, "notify a dead peer: silent");
	CHECK(drain(x, 100, true) == 0, "nothing from a dead peer");
	errno = 0;
	CHECK(x->ops->evtchn_bind_interdomain(x, g, (xenif_port_t)gport) < 0 && errno == ESRCH,
	    "bind to a destroyed domain");
	xenif_close(b);
	xenif_close(x);
	return check_failures != 0;
}
