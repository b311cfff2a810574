/*
 * vcpu-source.h - mtraced's hypervisor source (issue 38): on a timer, what the hypervisor
 * did with each traced domain's vCPUs, as runstate intervals on the host's timeline
 * (vcpu.h), handed to the state and streamed.  Off unless vcpu_source is set.
 *
 *   vcpu-source.c  the timer, the delivery (state, stream), the simulation's clock
 *   vcpu-sim.c     the simulated Xen: each domain's tasks' schedstat, sampled
 *   vcpu-xen.c     real Xen: the trace buffers, decoded (vcpu-decode.c), merged into
 *                  intervals (vcpu-runstate.c), their TSC mapped to CLOCK_REALTIME
 */
#ifndef MTRACED_VCPU_SOURCE_H
#define MTRACED_VCPU_SOURCE_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct mtraced_config;
struct stream;
struct vcpu_source;
struct xenif;

/* The source of x's kind (it needs XENIF_TBUF and XENIF_CLOCK), delivering to stream.
 * NULL with err when it cannot start (no trace buffers, no permission). */
struct vcpu_source *vcpu_source_new(struct event_base *base, struct xenif *x,
    const struct mtraced_config *cfg, struct stream *stream, char *err, size_t errlen);
void vcpu_source_reconfigure(struct vcpu_source *vs, const struct mtraced_config *cfg);
void vcpu_source_free(struct vcpu_source *vs); /* NULL: nothing */

#endif
