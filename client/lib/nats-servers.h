/*
 * nats-servers.h - the --nats URL of mtrace-ship and mtrace-cat: one server or several,
 * comma separated (a cluster), onto libnats' options.
 */
#ifndef MTRACE_NATS_SERVERS_H
#define MTRACE_NATS_SERVERS_H

#include <nats/nats.h>

/* natsOptions_SetURL in libnats 3.4.1 takes one URL only: the list goes through
 * natsOptions_SetServers (at most 16). */
natsStatus nats_servers_set(natsOptions *no, const char *url);

#endif
