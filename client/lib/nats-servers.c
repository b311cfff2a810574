/*
 * nats-servers.c - the --nats URL list onto libnats' options, and --since (nats-servers.h).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nats-servers.h"

natsStatus nats_servers_set(natsOptions *no, const char *url)
{
	char *copy = strdup(url), *save = NULL, *tok;
	const char *list[16];
	int n = 0;
	natsStatus st;

	if (!copy)
		return NATS_NO_MEMORY;
	for (tok = strtok_r(copy, ",", &save); tok && n < 16; tok = strtok_r(NULL, ",", &save))
		list[n++] = tok;
	st = n ? natsOptions_SetServers(no, list, n) : NATS_INVALID_ARG;
	free(copy);
	return st;
}

natsStatus nats_options_new(natsOptions **no, const char *url, const char *creds)
{
	natsStatus st = natsOptions_Create(no);

	if (st == NATS_OK)
		st = nats_servers_set(*no, url);
	if (st == NATS_OK && creds)
		st = natsOptions_SetUserCredentialsFromFiles(*no, creds, NULL);
	if (st != NATS_OK) {
		natsOptions_Destroy(*no);
		*no = NULL;
	}
	return st;
}

int nats_parse_since(const char *s, int64_t *ns)
{
	struct tm tm = { 0 };
	char *end;
	double v = strtod(s, &end);

	if (*s && !*end && v > 0) {
		*ns = (int64_t)(v * 1e9);
		return 0;
	}
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end || (*end && strcmp(end, "Z") != 0))
		return -1;
	*ns = (int64_t)timegm(&tm) * 1000000000;
	return 0;
}
