/*
 * json-vcpu.c - the JSON of issue 38's records (docs/json.md, "vCPU scheduling"): a
 * VcpuIntervals as one "vcpu" object of columns, and the vCPU and wait figures that
 * the domain, label and site objects of a "stats" object carry.
 */
#include <inttypes.h>

#include "json.h"

#define ADD(b, lit) evbuffer_add((b), "" lit, sizeof(lit) - 1)

static const char *const vstate[] = { "running", "runnable", "blocked", "offline", "mixed" };

const char *json_vcpu_state_name(unsigned s)
{
	return s < 5 ? vstate[s] : "unknown";
}

const char *json_vcpu_source_name(unsigned s)
{
	return s == 1 ? "xen" : s == 2 ? "sim" : "none";
}

/* Columns of unequal length come from a broken or hostile peer: -1, nothing written. */
int json_vcpu(struct evbuffer *b, const Mtrace__VcpuIntervals *v)
{
	size_t n = v->n_vcpu;

	if (v->n_start_ns != n || v->n_dur_ns != n || v->n_state != n || v->n_running_ns != n ||
	    v->n_runnable_ns != n || v->n_blocked_ns != n || v->n_pcpu != n ||
	    v->n_wake_ns != v->n_wake_vcpu)
		return -1;
	evbuffer_add_printf(b,
	    "{\"v\":" JSON_V ",\"type\":\"vcpu\",\"domid\":%" PRIu32
	    ",\"source\":\"%s\",\"uncertainty_ns\":%" PRIu64 ",\"guest_mapped\":%s"
	    ",\"guest_offset_ns\":%" PRId64 ",\"intervals\":[",
	    v->domid, json_vcpu_source_name(v->source), v->uncertainty_ns,
	    v->guest_mapped ? "true" : "false", v->guest_offset_ns);
	for (size_t i = 0; i < n; i++)
		evbuffer_add_printf(b,
		    "%s{\"vcpu\":%" PRIu32 ",\"start_ns\":%" PRId64 ",\"dur_ns\":%" PRIu64
		    ",\"state\":\"%s\",\"running_ns\":%" PRIu64 ",\"runnable_ns\":%" PRIu64
		    ",\"blocked_ns\":%" PRIu64 ",\"pcpu\":%" PRId32 "}",
		    i ? "," : "", v->vcpu[i], v->start_ns[i], v->dur_ns[i],
		    json_vcpu_state_name(v->state[i]), v->running_ns[i], v->runnable_ns[i],
		    v->blocked_ns[i], v->pcpu[i]);
	ADD(b, "],\"wakes\":[");
	for (size_t i = 0; i < v->n_wake_vcpu; i++)
		evbuffer_add_printf(b, "%s{\"vcpu\":%" PRIu32 ",\"ns\":%" PRId64 "}", i ? "," : "",
		    v->wake_vcpu[i], v->wake_ns[i]);
	ADD(b, "]}");
	return 0;
}

/* ,"vcpu":{...} in a domain's statistics (nothing when there are no figures). */
void json_domain_vcpu(struct evbuffer *b, const Mtrace__DomainStats *d)
{
	if (!d->vcpu_since_ns)
		return;
	evbuffer_add_printf(b,
	    ",\"vcpu\":{\"since_ns\":%" PRId64 ",\"until_ns\":%" PRId64 ",\"running_ns\":%" PRIu64
	    ",\"runnable_ns\":%" PRIu64 ",\"blocked_ns\":%" PRIu64 ",\"offline_ns\":%" PRIu64
	    ",\"wakeups\":%" PRIu64 ",\"vcpus\":[",
	    d->vcpu_since_ns, d->vcpu_until_ns, d->vcpu_running_ns, d->vcpu_runnable_ns,
	    d->vcpu_blocked_ns, d->vcpu_offline_ns, d->vcpu_wakeups);
	for (size_t i = 0; i < d->n_vcpus; i++) {
		const Mtrace__VcpuStats *v = d->vcpus[i];
		evbuffer_add_printf(b,
		    "%s{\"vcpu\":%" PRIu32 ",\"running_ns\":%" PRIu64 ",\"runnable_ns\":%" PRIu64
		    ",\"blocked_ns\":%" PRIu64 ",\"offline_ns\":%" PRIu64 ",\"wakeups\":%" PRIu64
		    ",\"state\":\"%s\",\"pcpu\":%" PRId32 "}",
		    i ? "," : "", v->vcpu, v->running_ns, v->runnable_ns, v->blocked_ns,
		    v->offline_ns, v->wakeups, json_vcpu_state_name(v->state), v->pcpu);
	}
	ADD(b, "]}");
}

/* ,"waits":..,"wait_ns":..,"wait_steal_ns":..,"wait_blocked_ns":.. of a label or site. */
void json_waits(struct evbuffer *b, uint64_t waits, uint64_t ns, uint64_t steal, uint64_t blocked)
{
	evbuffer_add_printf(b,
	    ",\"waits\":%" PRIu64 ",\"wait_ns\":%" PRIu64 ",\"wait_steal_ns\":%" PRIu64
	    ",\"wait_blocked_ns\":%" PRIu64,
	    waits, ns, steal, blocked);
}

/* ,"vcpu_source":..,"hypervisor_records":.. of a stats object. */
void json_stats_vcpu(struct evbuffer *b, const Mtrace__Stats *s)
{
	evbuffer_add_printf(b,
	    ",\"vcpu_source\":\"%s\",\"hypervisor_records\":%" PRIu64
	    ",\"hypervisor_lost\":%" PRIu64 ",\"hypervisor_dropped\":%" PRIu64
	    ",\"waits_unattributed\":%" PRIu64,
	    json_vcpu_source_name(s->vcpu_source), s->hypervisor_records, s->hypervisor_lost,
	    s->hypervisor_dropped, s->waits_unattributed);
}
