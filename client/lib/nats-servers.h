/*
 * nats-servers.h - the --nats URL of mtrace-ship, mtrace-cat and mtrace-web: one server or several,
 * comma separated (a cluster), onto libnats' options; and --since, the time a reader of
 * the stream starts from (mtrace-cat, mtrace-web).
 */
#ifndef MTRACE_NATS_SERVERS_H
#define MTRACE_NATS_SERVERS_H

#include <stdint.h>

#include <nats/nats.h>

/* natsOptions_SetURL in libnats 3.4.1 takes one URL only: the list goes through
 * natsOptions_SetServers (at most 16). */
natsStatus nats_servers_set(natsOptions *no, const char *url);
/* New options for --nats URL and --creds FILE (NULL: none), what every program asks of
 * them first; the caller adds its own and destroys them.  *no is NULL on an error. */
natsStatus nats_options_new(natsOptions **no, const char *url, const char *creds);
/* --since: Unix seconds (fractions allowed) or YYYY-MM-DDTHH:MM:SS[Z] (UTC), in ns since
 * the epoch; 0, or -1 if s is neither. */
int nats_parse_since(const char *s, int64_t *ns);

#endif
