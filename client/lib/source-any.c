/*
 * source-any.c - the source a command line names (source.h): apart from source.c
 * because the fleet's backend links libnats, which only the readers of the fleet need.
 */
#include <stdio.h>

#include "nats-servers.h"
#include "source.h"

struct mtc_source *mtc_source_new(const struct mtc_source_spec *spec, char *err, size_t errlen)
{
	struct mtc_source *s;

	if (mtc_source_spec_check(spec, err, errlen) < 0)
		return NULL;
	if (spec->nats)
		return mtc_source_fleet(spec, err, errlen);
	s = spec->input ? mtc_source_recording(spec->input)
	                : mtc_source_mtraced(spec->socket, spec->software);
	if (!s)
		snprintf(err, errlen, "out of memory");
	return s;
}

int mtc_source_opt(struct mtc_source_spec *spec, int opt, const char *arg)
{
	const char *prog = spec->prog ? spec->prog : "mtrace";

	switch (opt) {
	case MTC_OPT_NATS:
		spec->nats = arg;
		return 1;
	case MTC_OPT_HOST:
		if (spec->n_hosts == MTC_SOURCE_HOSTS_MAX) {
			fprintf(stderr, "%s: --host: at most %d\n", prog, MTC_SOURCE_HOSTS_MAX);
			return -1;
		}
		spec->hosts[spec->n_hosts++] = arg;
		return 1;
	case MTC_OPT_SINCE:
		if (nats_parse_since(arg, &spec->since_ns) < 0) {
			fprintf(stderr, "%s: --since: bad time '%s'\n", prog, arg);
			return -1;
		}
		return 1;
	case MTC_OPT_FROM_START:
		spec->from_start = true;
		return 1;
	case MTC_OPT_FOLLOW:
		spec->follow = true;
		return 1;
	case MTC_OPT_CREDS:
		spec->creds = arg;
		return 1;
	default:
		return 0;
	}
}
