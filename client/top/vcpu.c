/*
 * vcpu.c - the %RUN and %STEAL of each domain (issue 38), as xentop's CPU% and top's
 * st: how much of a physical CPU its vCPUs ran, and waited runnable for one, between
 * two Stats (the change of the domain's vcpu_running_ns and vcpu_runnable_ns over the
 * change of vcpu_until_ns, the instant mtraced's figures reach); at the first Stats,
 * or when the figures did not move, the average since they began.  100 % is one
 * physical CPU: a domain with several vCPUs can pass it.
 */
#include <stdlib.h>

#include "top.h"

static const Mtrace__DomainStats *find(const Mtrace__Stats *s, uint32_t domid)
{
	for (size_t i = 0; s && i < s->n_domains; i++)
		if (s->domains[i]->domid == domid)
			return s->domains[i];
	return NULL;
}

void vcpu_rates(struct top_model *m, const Mtrace__Stats *old, const Mtrace__Stats *now)
{
	free(m->vcpu);
	m->vcpu = calloc(now->n_domains ? now->n_domains : 1, sizeof(*m->vcpu));
	m->nvcpu = 0;
	if (!m->vcpu)
		return;
	for (size_t i = 0; i < now->n_domains; i++) {
		const Mtrace__DomainStats *d = now->domains[i], *p = find(old, d->domid);
		if (!d->vcpu_since_ns || d->vcpu_until_ns <= d->vcpu_since_ns)
			continue;
		/* the figures of the same run of the source: from the previous Stats on */
		bool step = p && p->vcpu_since_ns == d->vcpu_since_ns &&
		    d->vcpu_until_ns > p->vcpu_until_ns &&
		    d->vcpu_running_ns >= p->vcpu_running_ns &&
		    d->vcpu_runnable_ns >= p->vcpu_runnable_ns;
		double span = (double)(step ? d->vcpu_until_ns - p->vcpu_until_ns
		                            : d->vcpu_until_ns - d->vcpu_since_ns);
		uint64_t run = d->vcpu_running_ns - (step ? p->vcpu_running_ns : 0);
		uint64_t steal = d->vcpu_runnable_ns - (step ? p->vcpu_runnable_ns : 0);
		m->vcpu[m->nvcpu++] = (struct top_vcpu_rate){ d->domid, 100.0 * (double)run / span,
			100.0 * (double)steal / span };
	}
}

bool vcpu_rate(const struct top_model *m, uint32_t domid, double *run, double *steal)
{
	for (size_t i = 0; i < m->nvcpu; i++)
		if (m->vcpu[i].domid == domid) {
			*run = m->vcpu[i].run;
			*steal = m->vcpu[i].steal;
			return true;
		}
	return false;
}
