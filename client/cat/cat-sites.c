/*
 * cat-sites.c - mtrace-cat's JSON of creation sites and the creation graph between
 * them (Stats.sites, Stats.site_edges), appended to a stats line.
 */
#include <inttypes.h>

#include "cat-format.h"

void cat_json_sites(FILE *f, const Mtrace__Stats *s)
{
	size_t i, k;

	fputs(",\"sites\":[", f);
	for (i = 0; i < s->n_sites; i++) {
		const Mtrace__SiteStats *x = s->sites[i];

		fprintf(
		    f, "%s{\"domid\":%u,\"index\":%u,\"site\":", i ? "," : "", x->domid, x->index);
		cat_json_str(f, x->site);
		fprintf(f, ",\"named\":%s,\"address\":%" PRIu64 ",\"module\":",
		    x->named ? "true" : "false", x->address);
		cat_json_str(f, x->module);
		fprintf(f, ",\"offset\":%" PRIu64 ",\"resolved\":%s,\"frames\":[", x->offset,
		    x->resolved ? "true" : "false");
		for (k = 0; k < x->n_frames; k++) {
			fputs(k ? ",{\"function\":" : "{\"function\":", f);
			cat_json_str(f, x->frames[k]->function);
			fputs(",\"file\":", f);
			cat_json_str(f, x->frames[k]->file);
			fprintf(f, ",\"line\":%u}", x->frames[k]->line);
		}
		fprintf(f,
		    "],\"count\":%" PRIu64 ",\"live\":%" PRIu64 ",\"creation_rate\":%.2f"
		    ",\"lifetime_p50_ns\":%" PRIu64 ",\"lifetime_p99_ns\":%" PRIu64
		    ",\"pending_p50_ns\":%" PRIu64 ",\"pending_p99_ns\":%" PRIu64 "}",
		    x->count, x->live, x->creation_rate, x->lifetime_p50_ns, x->lifetime_p99_ns,
		    x->pending_p50_ns, x->pending_p99_ns);
	}
	fputs("],\"site_drops\":[", f);
	for (i = 0; i < s->n_domains; i++) {
		const Mtrace__DomainStats *d = s->domains[i];
		fprintf(f,
		    "%s{\"domid\":%u,\"sites_dropped\":%" PRIu64 ",\"sites_bad\":%" PRIu64
		    ",\"site_edges_dropped\":%" PRIu64 ",\"modules_dropped\":%" PRIu64 "}",
		    i ? "," : "", d->domid, d->sites_dropped, d->sites_bad, d->site_edges_dropped,
		    d->modules_dropped);
	}
	fputs("],\"site_edges\":[", f);
	for (i = 0; i < s->n_site_edges; i++) {
		const Mtrace__SiteEdge *e = s->site_edges[i];
		fprintf(f, "%s{\"domid\":%u,\"parent\":%d,\"child\":%u,\"count\":%" PRIu64 "}",
		    i ? "," : "", e->domid, e->parent, e->child, e->count);
	}
	/* what mtraced left out to fit the frame */
	fprintf(f, "],\"sites_omitted\":%u,\"site_edges_omitted\":%u", s->sites_omitted,
	    s->site_edges_omitted);
}
