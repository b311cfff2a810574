/*
 * vcpu-xen.h - real Xen's scheduling from its trace buffers (vcpu-xen.c), for the
 * hypervisor source (vcpu-source.c).
 */
#ifndef MTRACED_VCPU_XEN_H
#define MTRACED_VCPU_XEN_H

#include <stddef.h>

#include "vcpu.h"

struct mtraced_config;
struct vcpu_xen;
struct xenif;

/* The buffers of x opened and mapped; NULL with err when they cannot be. */
struct vcpu_xen *vcpu_xen_new(
    struct xenif *x, const struct mtraced_config *cfg, char *err, size_t errlen);
/* Every CPU's buffer read, decoded, and each domain's batch up to now to deliver. */
void vcpu_xen_tick(struct vcpu_xen *v, vcpu_deliver_fn deliver, void *arg);
void vcpu_xen_free(struct vcpu_xen *v);

#endif
