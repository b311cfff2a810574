/*
 * nats-servers.c - the --nats URL list onto libnats' options (nats-servers.h).
 */
#include <stdlib.h>
#include <string.h>

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
