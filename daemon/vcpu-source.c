/*
 * vcpu-source.c - the hypervisor source's timer and delivery (vcpu-source.h).
 *
 * Every vcpu_interval_ms: in the simulated Xen, dom0's monotonic-to-realtime offset
 * from the seam's clock sample (the simulation's Xen time is the host's monotonic
 * clock), so that the state can put a simulated guest's thread times on the host's
 * line; then the backend's pass (vcpu-sim.c or vcpu-xen.c), whose batches come back
 * through deliver(): the state takes each one whole, the clients get it as
 * VcpuIntervals messages of at most VCPU_MSG_MAX intervals (well inside a frame).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "config.h"
#include "log.h"
#include "state.h"
#include "stream.h"
#include "vcpu-sim.h"
#include "vcpu-source.h"
#include "vcpu-xen.h"
#include "vcpu.h"
#include "xenif.h"

#define VCPU_MSG_MAX 4096

struct vcpu_source {
	struct event_base *base;
	struct event *tick;
	struct xenif *x;
	struct stream *stream;
	unsigned interval_ms;
	struct vcpu_sim *sim;
	struct vcpu_xen *xen;
	bool clock_told; /* a failing clock sample is logged once */
};

static void deliver(void *arg, const struct vcpu_batch *b)
{
	struct vcpu_source *vs = arg;
	struct state_domain *d = state_domain_find(b->domid);

	if (!d)
		return;
	state_vcpu_batch(d, b);
	struct vcpu_batch whole = *b;
	whole.guest_mapped = state_vcpu_offset(d, &whole.guest_offset_ns);
	size_t at = 0;
	do {
		struct vcpu_batch part = whole;
		part.iv = b->iv + at;
		part.n = b->n - at < VCPU_MSG_MAX ? b->n - at : VCPU_MSG_MAX;
		part.nwakes = at ? 0 : b->nwakes; /* the wake-ups go with the first part */
		stream_vcpu(vs->stream, &part);
		at += part.n;
	} while (at < b->n);
}

static void same_kernel_clock(struct vcpu_source *vs)
{
	struct xenif_clock_sample cs;

	if (vs->x->ops->clock_sample(vs->x, &cs) < 0) {
		if (!vs->clock_told)
			log_warnx("vcpu source: no clock sample (%s): thread waits are not "
			          "measured against the vCPUs",
			    strerror(errno));
		vs->clock_told = true;
		state_vcpu_same_kernel(0, false);
		return;
	}
	state_vcpu_same_kernel(cs.realtime_ns - (int64_t)cs.xen_ns, true);
}

static void arm(struct vcpu_source *vs)
{
	struct timeval tv = { vs->interval_ms / 1000, (vs->interval_ms % 1000) * 1000 };
	event_add(vs->tick, &tv);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct vcpu_source *vs = arg;

	(void)fd, (void)what;
	if (vs->sim) {
		same_kernel_clock(vs);
		vcpu_sim_tick(vs->sim, deliver, vs);
	} else {
		vcpu_xen_tick(vs->xen, deliver, vs);
	}
	arm(vs);
}

void vcpu_source_reconfigure(struct vcpu_source *vs, const struct mtraced_config *cfg)
{
	if (vs)
		vs->interval_ms = cfg->vcpu_interval_ms;
}

struct vcpu_source *vcpu_source_new(struct event_base *base, struct xenif *x,
    const struct mtraced_config *cfg, struct stream *stream, char *err, size_t errlen)
{
	struct vcpu_source *vs = calloc(1, sizeof(*vs));

	if (!vs || !(vs->tick = evtimer_new(base, on_tick, vs))) {
		snprintf(err, errlen, "vcpu source: out of memory");
		free(vs);
		return NULL;
	}
	vs->base = base;
	vs->x = x;
	vs->stream = stream;
	vs->interval_ms = cfg->vcpu_interval_ms;
	if (!strcmp(x->ops->name, "sim")) {
		if (!(vs->sim = vcpu_sim_new(x)))
			snprintf(err, errlen, "vcpu source: out of memory");
	} else {
		vs->xen = vcpu_xen_new(x, cfg, err, errlen);
	}
	if (!vs->sim && !vs->xen) {
		event_free(vs->tick);
		free(vs);
		return NULL;
	}
	state_vcpu_source(vs->sim ? VCPU_SOURCE_SIM : VCPU_SOURCE_XEN);
	arm(vs);
	return vs;
}

void vcpu_source_free(struct vcpu_source *vs)
{
	if (!vs)
		return;
	event_free(vs->tick);
	if (vs->sim)
		vcpu_sim_free(vs->sim);
	if (vs->xen)
		vcpu_xen_free(vs->xen);
	state_vcpu_source(VCPU_SOURCE_NONE);
	free(vs);
}
