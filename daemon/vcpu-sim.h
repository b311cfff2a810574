/*
 * vcpu-sim.h - the simulated Xen's scheduling, sampled (vcpu-sim.c), for the hypervisor
 * source (vcpu-source.c).
 */
#ifndef MTRACED_VCPU_SIM_H
#define MTRACED_VCPU_SIM_H

#include "vcpu.h"

struct vcpu_sim;
struct xenif;

struct vcpu_sim *vcpu_sim_new(struct xenif *x);
/* One sample of every traced domain, each domain's batch to deliver(arg, batch). */
void vcpu_sim_tick(struct vcpu_sim *s, vcpu_deliver_fn deliver, void *arg);
void vcpu_sim_free(struct vcpu_sim *s);

#endif
